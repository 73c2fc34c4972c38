/**
 * `deno task backup [--out FILE]`: a consistent snapshot of the KV file the server uses
 * (same config: `--config`, `SWITCHYARD_CONFIG`, `SWITCHYARD_KV`), taken while servers run.
 *
 * Deno KV's API has no snapshot (a `list` over many entries reads them in batches, between
 * which other processes write), but a local Deno KV store is an SQLite database, and SQLite's
 * online backup API copies it as of one read transaction (all pages in one step). It is
 * reached through `node:sqlite` (built into Deno; `VACUUM INTO` would need ATTACH, which Deno
 * allows only with every permission), read-only on the live file. Restoring is copying the
 * snapshot back while no server runs (README, "Backup and upgrade").
 */
import { backup, DatabaseSync } from "node:sqlite";
import { dirname } from "node:path";
import { parseArgs } from "../args.ts";
import { ConfigError } from "../config/error.ts";
import { loadConfig } from "../config/load.ts";
import { isLocalKvFile } from "../kv/open.ts";
import { type CliIo, processIo } from "./io.ts";
import { runCli } from "./run_cli.ts";

const USAGE = `Usage: deno task backup [--out FILE] [--config PATH]

Writes a consistent snapshot of the KV file (kv.path, or SWITCHYARD_KV) to FILE (default:
backups/switchyard-<UTC time>.kv), while servers keep running. Restore: stop every server,
copy the snapshot over kv.path (deleting its -wal and -shm files), start again.
`;

/** `backups/switchyard-20260115T120000Z.kv` for `ms`. */
function defaultOut(ms: number): string {
  const stamp = new Date(ms).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  return `backups/switchyard-${stamp}.kv`;
}

/** Writes the snapshot of the SQLite database at `from` to `to` (which must not exist). */
export async function snapshot(from: string, to: string): Promise<void> {
  const db = new DatabaseSync(from, { readOnly: true });
  try {
    await backup(db, to, { rate: -1 });
  } finally {
    db.close();
  }
}

async function run(argv: readonly string[], io: CliIo): Promise<void> {
  const args = parseArgs(argv, { values: ["out", "config"], switches: ["help"] });
  if (args.switches.has("help")) return void io.stdout(USAGE);
  const out = args.values.get("out");
  const configPath = args.values.get("config");
  const configArgs = configPath === undefined ? [] : ["--config", configPath];
  const config = await loadConfig({ args: configArgs, env: io.env });
  const from = config.kv.path;
  if (!isLocalKvFile(from)) {
    throw new ConfigError(
      `kv.path is ${from === null ? "null (Deno's default location)" : JSON.stringify(from)}: ` +
        "deno task backup copies a local KV file; see docs/backup-and-upgrade.md for KV Connect and Deno Deploy",
    );
  }
  await Deno.stat(from).catch(() => {
    throw new ConfigError(`${from}: no KV file there yet (start the server once)`);
  });
  const to = out ?? defaultOut(Date.now());
  if (await Deno.stat(to).then(() => true, () => false)) {
    throw new ConfigError(`${to} exists already; choose another --out`);
  }
  await Deno.mkdir(dirname(to), { recursive: true });
  await snapshot(from, to);
  const kv = await Deno.openKv(to);
  let entries = 0;
  try {
    for await (const _ of kv.list({ prefix: [] })) entries++;
  } finally {
    kv.close();
  }
  io.stdout(`${to}\n`);
  io.stderr(`Backed up ${entries} KV entries from ${from} to ${to}.\n`);
}

/** Runs the CLI; returns the exit code (0 done, 1 failed, 2 usage error). */
export function runBackupCli(args: readonly string[], io: CliIo): Promise<number> {
  return runCli("backup", USAGE, io, () => run(args, io));
}

if (import.meta.main) Deno.exit(await runBackupCli(Deno.args, processIo));
