/**
 * Opening the KV store the config names. Several processes opening one local file at once
 * (the workers of `deno serve --parallel`, a CLI next to a server) can meet SQLite's
 * "database is locked" while the file's schema is set up; the open is tried again then.
 */
import { dirname } from "node:path";
import { isKvBusy, kvBackoff } from "./busy.ts";
import { isNotGranted, outsideGrants } from "../serve/grants.ts";

/** The KV file used when the config names none (relative to the working directory). */
export const DEFAULT_KV_PATH = "data/switchyard.kv";

/** Whether a `kv.path` names a local file (not Deno's default location, `:memory:` or a
 * KV Connect URL). */
export function isLocalKvFile(path: string | null): path is string {
  return path !== null && path !== ":memory:" && !/^https?:\/\//i.test(path);
}

/** Opens the store at `path` (`null`: Deno's default location), creating a local file's
 * directory first, and trying again while the file is busy (up to `attempts` times). */
export async function openKv(path: string | null, attempts = 50): Promise<Deno.Kv> {
  try {
    if (isLocalKvFile(path)) await makeParent(path);
    for (let attempt = 1;; attempt++) {
      try {
        return await Deno.openKv(path ?? undefined);
      } catch (e) {
        if (!isKvBusy(e) || attempt >= attempts) throw e;
        await kvBackoff(attempt);
      }
    }
  } catch (e) {
    if (!isNotGranted(e)) throw e;
    const where = path ?? "Deno's default KV location";
    throw new Error(
      `cannot open the KV store (kv.path): ${outsideGrants(where, "read and write")}`,
      {
        cause: e,
      },
    );
  }
}

/** Creates the directory of the KV file at `path`. A grant of the file alone (the fix the error
 * above suggests) does not cover its directory: Deno then refuses the mkdir even when the
 * directory exists, and the open itself says whether the file can be used. */
async function makeParent(path: string): Promise<void> {
  try {
    await Deno.mkdir(dirname(path), { recursive: true });
  } catch (e) {
    if (!isNotGranted(e)) throw e;
  }
}
