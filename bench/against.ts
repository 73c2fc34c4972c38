/**
 * For `deno task bench --against REV`: a second Switchyard built from another git revision,
 * checked out in a detached worktree under `.bench-out/`, and the bench config trimmed to the
 * fields that revision's config reader knows.
 */

const decoder = new TextDecoder();

/** Runs git in `cwd`; resolves with its trimmed stdout, or throws with its stderr. */
export async function git(cwd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${decoder.decode(out.stderr).trim()}`);
  }
  return decoder.decode(out.stdout).trim();
}

export interface Worktree {
  /** The revision as given (`main`, `HEAD~3`, a commit). */
  rev: string;
  /** The commit it names. */
  commit: string;
  /** The worktree's directory, ending in `/`. */
  root: string;
}

/** The worktrees of this process are `.bench-out/against-<pid>`. */
const PREFIX = "against-";

/** Checks `rev` out, detached, into `<out>/against-<pid>`. */
export async function addWorktree(repo: string, out: string, rev: string): Promise<Worktree> {
  const commit = await git(repo, ["rev-parse", "--verify", "--end-of-options", `${rev}^{commit}`]);
  const root = `${out}/${PREFIX}${Deno.pid}`;
  await removeWorktree(repo, root);
  await git(repo, ["worktree", "add", "--detach", "--quiet", root, commit]);
  return { rev, commit, root: `${root}/` };
}

/** Removes a worktree (its directory and git's record of it); quiet when there is none. */
export async function removeWorktree(repo: string, root: string): Promise<void> {
  await git(repo, ["worktree", "remove", "--force", root]).catch(() => {});
  await Deno.remove(root, { recursive: true }).catch(() => {});
}

/** Removes the worktrees that earlier runs, killed before they could clean up, left behind
 * (those whose process is gone). */
export async function removeStaleWorktrees(repo: string, out: string): Promise<void> {
  let names: string[] = [];
  try {
    names = [...Deno.readDirSync(out)].map((e) => e.name).filter((n) => n.startsWith(PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(name.slice(PREFIX.length));
    const alive = Number.isInteger(pid) &&
      (await Deno.stat(`/proc/${pid}`).then(() => true, () => false));
    if (!alive) await removeWorktree(repo, `${out}/${name}`);
  }
}

/**
 * The config `config` as the Switchyard at `root` accepts it: a config object key is kept only
 * when that revision's config reader names it in quotes (its reader rejects unknown keys, and
 * reads every key it knows as `f.int("key", …)`, `root.raw("key")` and so on). So a field the
 * bench sets that an older revision lacks is left out of that side's config, and named in
 * `dropped`.
 */
export async function fitConfig(
  config: Record<string, unknown>,
  root: string,
): Promise<{ config: Record<string, unknown>; dropped: string[] }> {
  const source = await configReaderSource(root);
  const dropped = new Set<string>();
  const fit = (value: unknown, path: string): unknown => {
    if (Array.isArray(value)) return value.map((item) => fit(item, `${path}[]`));
    if (value === null || typeof value !== "object") return value;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      if (source.includes(`"${key}"`)) out[key] = fit(item, at);
      else dropped.add(at);
    }
    return out;
  };
  return { config: fit(config, "") as Record<string, unknown>, dropped: [...dropped] };
}

/** The text of the config reader at `root`: the files of `src/config/`, or `src/config.ts` in a
 * revision from before the reader was split into that folder. */
async function configReaderSource(root: string): Promise<string> {
  let names: string[];
  try {
    names = [...Deno.readDirSync(`${root}src/config`)].filter((e) => e.isFile)
      .map((e) => e.name).filter((name) => name.endsWith(".ts")).sort();
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    return await Deno.readTextFile(`${root}src/config.ts`);
  }
  const texts = await Promise.all(
    names.map((name) => Deno.readTextFile(`${root}src/config/${name}`)),
  );
  return texts.join("\n");
}

/** Writes `rows` rows of 100 request records (one row a second, ending now) to the KV file at
 * `kvPath` with the checkout at `root`'s own log sink, as a gateway that has served a while has
 * them: a day of 200,000 requests is 2,000 rows. */
export async function writeLogHistory(root: string, kvPath: string, rows: number): Promise<void> {
  if (rows <= 0) return;
  const code = `
    import { KvLogSink } from "./src/log/kv_sink.ts";
    const kv = await Deno.openKv(Deno.args[0]);
    const rows = Number(Deno.args[1]);
    const sink = new KvLogSink({ kv, retentionDays: 7, intervalMs: 3_600_000, maxRecordsPerMinute: 1e12 });
    const end = Math.floor(Date.now() / 1000) * 1000;
    for (let r = 0; r < rows; r++) {
      const second = end - (rows - r) * 1000;
      for (let i = 0; i < 100; i++) {
        const record = {
          ts: new Date(second + i * 10).toISOString(),
          request_id: "req_" + crypto.randomUUID().replaceAll("-", ""),
          method: "POST",
          path: "/v1/chat/completions",
          status: i % 50 === 0 ? 429 : 200,
          ms: 100 + (i * 37) % 900,
          ip: "10.1." + (r % 256) + "." + i,
          key_id: "key_" + (i % 20),
          model: ["gpt-4o", "claude-sonnet-4", "gemini-2.5-pro"][i % 3],
          provider: ["openai", "anthropic", "gemini"][i % 3],
          prompt_tokens: 1000 + i * 13,
          completion_tokens: 200 + i * 7,
          error: i % 50 === 0 ? "rate_limited" : null,
        };
        sink.add(record, JSON.stringify(record));
      }
      if (r % 8 === 7) await sink.flush();
    }
    await sink.flush();
    kv.close();
  `;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", code, kvPath, String(rows)],
    cwd: root,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(
      `could not write the log history with ${root}src/log/kv_sink.ts: ${
        decoder.decode(out.stderr).trim()
      }`,
    );
  }
}

/** Creates the bench key (limits raised out of the way, still counted in KV on every request)
 * in the KV file at `kvPath` with the `KeyStore` of the Switchyard at `root`, so that each side
 * reads a key record it wrote itself; resolves with the key. */
export async function createBenchKey(root: string, kvPath: string): Promise<string> {
  const code = `
    import { KeyStore } from "./src/auth/keys.ts";
    import { systemClock } from "./src/clock.ts";
    const kv = await Deno.openKv(Deno.args[0]);
    const high = { per_minute: 1_000_000_000, per_day: 1_000_000_000 };
    const { key } = await new KeyStore(kv, systemClock).create({
      name: "bench",
      limits: { chat: high, other: high, images: high },
    });
    kv.close();
    console.log(key);
  `;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", code, kvPath],
    cwd: root,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const key = decoder.decode(out.stdout).trim();
  if (!out.success || !key) {
    throw new Error(
      `could not create the bench key with ${root}src/auth/keys.ts: ${
        decoder.decode(out.stderr).trim()
      }`,
    );
  }
  return key;
}
