/**
 * The load benchmark (`deno task bench`): a fast fake upstream, a bare pass-through proxy and
 * Switchyard, measured in one run, interleaved, with wrk on loopback. The proxies are pinned
 * to core 0 and the upstream and wrk to core 1 where `taskset` exists.
 *
 *   deno task bench                 the table (non-stream and stream at 32 and 256 connections,
 *                                   long prompts (a 100 KB body), paced streams (200 at once, 50
 *                                   chunks 10 ms apart, against a Switchyard, a pass-through, the
 *                                   JavaScript-stream floor (js_stream_floor.ts) and the floor of
 *                                   a server of one's own (http1_floor.ts), each its own), the
 *                                   Anthropic adapter, anonymous traffic from
 *                                   1 and 10,000 client addresses), then the unloaded time to a
 *                                   stream's first byte and to a non-stream answer's last
 *   deno task bench --soak          1,000 concurrent slow streams, pass-through then Switchyard,
 *                                   each after a warm-up; RSS before, at the peak and 30 s after
 *   deno task bench --soak --streams N   that many concurrent streams instead
 *   deno task bench --seconds 5     length of each wrk run (default 5)
 *   deno task bench --rounds 2      interleaved rounds per row (default 2; medians reported)
 *   deno task bench --log-history 2000   rows of 100 request records in each Switchyard's KV
 *                                   before it starts (default 2,000: a day of 200,000 requests),
 *                                   written by its own log sink, as a gateway that has served a
 *                                   while has them (0: a new KV)
 *   deno task bench --only clients  one part of the table: gateway, long, paced, anthropic,
 *                                   routing, embeddings, agents, guardrails, cache or clients
 *   deno task bench --only slow     200 clients uploading a chunked body a byte every 2 s: RSS
 *                                   per client (bench/slow_clients.ts)
 *   deno task bench --against main  also a Switchyard built from a git revision (a branch, a tag,
 *                                   a commit, HEAD~1), in the same run: see below
 *   deno task bench --v8-prof       also V8's tick profile of each Switchyard process, written to
 *                                   .bench-out/prof/<pid>.log (read with `node --prof-process`)
 *   deno task bench --metrics       the cost of metrics: this checkout with metrics on (a metrics
 *                                   token set) and off (`metrics.enabled` false), interleaved
 *   deno task bench --batch         live chat latency at a steady 50 requests/s with and without a
 *                                   batch (docs/batches.md) running on the same key, interleaved
 *
 * `--against REV` checks REV out into a detached git worktree (`.bench-out/against-<pid>`, removed
 * at the end, also when the run fails or is interrupted; one left by a killed run is removed by
 * the next) and starts its `main.ts` as a second Switchyard on core 0, with its own KV file and
 * bench key (made with REV's own `KeyStore`) and the same config, less any field REV's config
 * reader (`src/config/`, or `src/config.ts` before it) does not name (each side's config reader
 * rejects unknown keys; what was left out is printed). The fake upstream, the pass-through and wrk stay this checkout's. Its rows
 * (`switchyard@REV`, and `switchyard@REV→anthropic`) are measured in every round with the others,
 * REV and this checkout taking turns to go first, and a "CPU vs REV" column gives this checkout's
 * CPU µs per request as a percentage of REV's, also printed after the table and stored in
 * results.json under `against`: the figure that should stay within 105% for a non-stream request.
 * The paced streams are also run with the two loaded at the same time (100 streams each), the
 * steadier figure for a per-chunk change.
 *
 * Switchyard runs as in production (`deno task start`'s flags and environment), auth on (a key whose limits are raised out of the way but
 * still counted in KV on every request), validation on, logging on (stdout and KV). The
 * micro-benchmarks of the hot pieces are `deno task bench:micro`.
 */
import {
  addWorktree,
  createBenchKey,
  fitConfig,
  removeStaleWorktrees,
  removeWorktree,
  type Worktree,
  writeLogHistory,
} from "./against.ts";
import {
  chatBody,
  claudeCodeBody,
  claudeCodeHeaders,
  codexBody,
  EMBED_DIMENSIONS,
  EMBED_INPUTS,
  embedBody,
} from "./fixtures.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const OUT = `${ROOT}.bench-out`;
const args = parseArgs(Deno.args);
const TASKSET = await has("taskset");
const decoder = new TextDecoder();
/** Whether the table includes `name` (`--only` keeps one: gateway, long, paced, anthropic,
 * routing, embeddings, agents, guardrails, cache or clients). */
function section(name: string): boolean {
  return args.only === null || args.only === name;
}

/** A model reaching the bench upstream by three routes, for the routing rows. */
const ROUTED_MODEL = {
  id: "bench-routed",
  chat_completions: true,
  access: "key",
  routes: [
    { provider: "bench", upstream_model: "bench-a", weight: 2 },
    { provider: "bench", upstream_model: "bench-b" },
    { provider: "bench", upstream_model: "bench-c", priority: 1 },
  ],
};

/** The bench model with guardrails (pii and deny, on input and output), for the guardrails
 * rows (this checkout only). */
const GUARDED_MODEL = {
  id: "bench-guarded",
  provider: "bench",
  chat_completions: true,
  access: "key",
  guardrails: [
    { type: "pii", stage: "input", action: "redact", restore: true },
    {
      type: "deny",
      stage: "input",
      action: "block",
      words: ["project zeus", "codename"],
      patterns: ["ticket-[0-9]{3,8}"],
    },
    { type: "pii", name: "pii_out", stage: "output", action: "redact" },
    { type: "deny", name: "deny_out", stage: "output", action: "block", words: ["project zeus"] },
  ],
};

/** The request body of the guardrails rows is about this long (a user message of 10 KB). */
const GUARDED_PROMPT_BYTES = 10 * 1024;

/** An embedding model on the bench upstream, for the embeddings row (this checkout only). */
const EMBED_MODEL = {
  id: "bench-embed",
  provider: "bench",
  access: "key",
  embeddings: { dimensions: EMBED_DIMENSIONS, custom_dimensions: false },
};

/** The bench upstream's model with a response cache, for the cache rows (this checkout only):
 * wrk repeats one request, so every request after the first is a hit. */
const CACHED_MODEL = {
  id: "bench-cached",
  provider: "bench",
  chat_completions: true,
  access: "key",
  cache: { ttl_seconds: 3600 },
};

/** The paced rows: concurrent streams, chunks per stream, milliseconds between chunks. */
const PACED_STREAMS = 200;
const PACED_CHUNKS = 50;
const PACED_MS = 10;

/** The request body of the long-prompt rows is about this long (a user message of 100 KB). */
const LONG_PROMPT_BYTES = 100 * 1024;

/** Distinct client addresses of the many-clients rows. */
const CLIENTS = 10_000;

interface Proc {
  name: string;
  child: Deno.ChildProcess;
  pid: number;
  port: number;
}

interface Sample {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  errors: number;
  cpuUsPerRequest: number;
  /** The measured process's largest resident set during the run, in MB. */
  rssMb: number;
}

function parseArgs(argv: string[]) {
  const get = (name: string, fallback: number) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? Number(argv[i + 1]) : fallback;
  };
  const i = argv.indexOf("--against");
  const against = i >= 0 ? argv[i + 1] ?? "" : null;
  if (against !== null && (against === "" || against.startsWith("-"))) {
    console.error("--against needs a git revision: deno task bench --against main");
    Deno.exit(2);
  }
  if (against !== null && argv.includes("--soak")) {
    console.error("--against is for the table, not the soak");
    Deno.exit(2);
  }
  return {
    soak: argv.includes("--soak"),
    metrics: argv.includes("--metrics"),
    v8Prof: argv.includes("--v8-prof"),
    batch: argv.includes("--batch"),
    seconds: get("seconds", 5),
    rounds: get("rounds", 2),
    logHistory: get("log-history", 2000),
    streams: get("streams", 1000),
    against,
    only: (() => {
      const j = argv.indexOf("--only");
      return j >= 0 ? argv[j + 1] ?? "" : null;
    })(),
  };
}

async function has(command: string): Promise<boolean> {
  try {
    const out = await new Deno.Command("sh", { args: ["-c", `command -v ${command}`] }).output();
    return out.success;
  } catch {
    return false;
  }
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

function pinned(core: number, argv: string[]): string[] {
  return TASKSET ? ["taskset", "-c", String(core), ...argv] : argv;
}

async function spawn(
  name: string,
  core: number,
  argv: string[],
  env: Record<string, string>,
  port: number,
  cwd = ROOT,
): Promise<Proc> {
  const [cmd, ...rest] = pinned(core, argv);
  const log = await Deno.open(`${OUT}/${name}.log`, { write: true, create: true, truncate: true });
  const child = new Deno.Command(cmd!, {
    args: rest,
    cwd,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  child.stdout.pipeTo(log.writable).catch(() => {});
  const errors = await Deno.open(`${OUT}/${name}.stderr.log`, {
    write: true,
    create: true,
    truncate: true,
  });
  child.stderr.pipeTo(errors.writable).catch(() => {});
  atExit.add(() => stop({ name, child, pid: child.pid, port }));
  for (let i = 0; i < 400; i++) {
    try {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      conn.close();
      return { name, child, pid: child.pid, port };
    } catch {
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  throw new Error(
    `${name} did not start on port ${port} (see ${OUT}/${name}.log and ${name}.stderr.log)`,
  );
}

/** What an interrupted run must still undo (its processes, its worktree), newest first. */
const atExit = new Set<() => Promise<void>>();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, async () => {
    for (const undo of [...atExit].reverse()) await undo().catch(() => {});
    Deno.exit(130);
  });
}

async function stop(proc: Proc): Promise<void> {
  try {
    proc.child.kill("SIGTERM");
  } catch {
    // already gone
  }
  await proc.child.status;
}

/** User+system CPU seconds of a process so far (all its threads). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Peak resident set size of a process's life so far, in MB. */
async function peakRssMb(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

/** Samples a process's resident set every 100 ms until stopped; resolves with the largest, in
 * MB. (VmHWM only ever grows, so it cannot tell one run from the runs before it.) */
function watchRss(pid: number): { stop(): Promise<number> } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      peak = Math.max(peak, await rssMb(pid).catch(() => 0));
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return peak;
    },
  };
}

function toMs(value: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(value.trim());
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === "us" ? n / 1000 : m[2] === "ms" ? n : m[2] === "s" ? n * 1000 : n * 60_000;
}

/** wrk's Lua for `clients` distinct client addresses in `X-Forwarded-For`, a new one per
 * request, each of wrk's threads walking its own part of the range. */
function rotatingClients(clients: number): string[] {
  return [
    `local threads = 0`,
    `function setup(thread) thread:set("id", threads); threads = threads + 1 end`,
    `function init(args) n = id * ${Math.floor(clients / 2)} end`,
    `function request()`,
    `  n = (n + 1) % ${clients}`,
    `  wrk.headers["X-Forwarded-For"] = "10." .. math.floor(n / 65536) .. "." .. (math.floor(n / 256) % 256) .. "." .. (n % 256)`,
    `  return wrk.format()`,
    `end`,
  ];
}

async function wrk(
  url: string,
  connections: number,
  body: string,
  key: string | null,
  measured: Proc,
  clients = 1,
  seconds = args.seconds,
  extraHeaders: Record<string, string> = {},
): Promise<Sample> {
  // One script per measured process: `--metrics` runs two wrks at once.
  const script = `${OUT}/post_${measured.name}_${connections}_${
    key ? "k" : "n"
  }_${body.length}_${clients}.lua`;
  const headers = [`wrk.headers["Content-Type"] = "application/json"`];
  if (key) headers.push(`wrk.headers["Authorization"] = "Bearer ${key}"`);
  for (const [name, value] of Object.entries(extraHeaders)) {
    headers.push(`wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`);
  }
  const rotation = clients > 1 ? rotatingClients(clients) : [];
  await Deno.writeTextFile(
    script,
    [`wrk.method = "POST"`, `wrk.body = ${JSON.stringify(body)}`, ...headers, ...rotation].join(
      "\n",
    ) + "\n",
  );
  const before = await cpuSeconds(measured.pid);
  const rss = watchRss(measured.pid);
  const out = await new Deno.Command(pinned(1, ["wrk"])[0]!, {
    args: [
      ...pinned(1, ["wrk"]).slice(1),
      "-t",
      "2",
      "-c",
      String(connections),
      "-d",
      `${seconds}s`,
      "--latency",
      "-s",
      script,
      url,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const after = await cpuSeconds(measured.pid);
  const rssMb = await rss.stop();
  const text = decoder.decode(out.stdout);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? NaN);
  const requests = Number(/(\d+) requests in/.exec(text)?.[1] ?? NaN);
  const errors = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(text)?.[1] ?? 0) +
    Number(/Socket errors:.*timeout (\d+)/.exec(text)?.[1] ?? 0);
  const p50 = toMs(/\s50%\s+(\S+)/.exec(text)?.[1] ?? "");
  const p99 = toMs(/\s99%\s+(\S+)/.exec(text)?.[1] ?? "");
  const cpuUsPerRequest = ((after - before) * 1e6) / requests;
  return { rps, p50, p99, requests, errors, cpuUsPerRequest, rssMb };
}

/** Median time, unloaded, to the first body byte of a request's answer (a stream's first
 * event) or to its last (a whole non-stream answer). */
async function timeTo(
  url: string,
  body: string,
  key: string | null,
  byte: "first" | "last",
  { n = 200, extraHeaders = {}, fresh = false }: {
    n?: number;
    extraHeaders?: Record<string, string>;
    /** A new connection for each request (as curl and many clients make), else keep-alive. */
    fresh?: boolean;
  } = {},
): Promise<number> {
  const times: number[] = [];
  const headers: Record<string, string> = { "content-type": "application/json", ...extraHeaders };
  if (key) headers.authorization = `Bearer ${key}`;
  for (let i = 0; i < n; i++) {
    const client = fresh ? Deno.createHttpClient({}) : undefined;
    const t0 = performance.now();
    const res = await fetch(url, { method: "POST", headers, body, ...(client ? { client } : {}) });
    const reader = res.body!.getReader();
    let read = await reader.read();
    if (byte === "first") times.push(performance.now() - t0);
    while (!read.done) read = await reader.read();
    if (byte === "last") times.push(performance.now() - t0);
    client?.close();
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

/** The idle gap before each commit of {@link kvCommitTimes}' second set. */
const IDLE_GAP_MS = 20;

/** Median wall time of a commit like the admission's (a check and a set of one counter, with an
 * expiry) on a KV file at `path`: 200 back to back, then 100 each after {@link IDLE_GAP_MS}. */
async function kvCommitTimes(path: string): Promise<{ backToBack: number; afterIdle: number }> {
  for (const suffix of ["", "-wal", "-shm"]) await Deno.remove(path + suffix).catch(() => {});
  const kv = await Deno.openKv(path);
  try {
    const commit = async (i: number) => {
      const key = ["ratelimit", "chat", "ip", `10.0.${i >> 8}.${i & 255}`];
      const t0 = performance.now();
      await kv.atomic().check({ key, versionstamp: null }).set(key, [0, 1, 0, 1], {
        expireIn: 60_000,
      }).commit();
      return performance.now() - t0;
    };
    const backToBack: number[] = [];
    for (let i = 0; i < 200; i++) backToBack.push(await commit(i));
    const afterIdle: number[] = [];
    for (let i = 200; i < 300; i++) {
      await new Promise((resolve) => setTimeout(resolve, IDLE_GAP_MS));
      afterIdle.push(await commit(i));
    }
    return { backToBack: median(backToBack), afterIdle: median(afterIdle) };
  } finally {
    kv.close();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function medianSample(samples: Sample[]): Sample {
  return {
    rps: median(samples.map((s) => s.rps)),
    p50: median(samples.map((s) => s.p50)),
    p99: median(samples.map((s) => s.p99)),
    requests: samples.reduce((a, s) => a + s.requests, 0),
    errors: samples.reduce((a, s) => a + s.errors, 0),
    cpuUsPerRequest: median(samples.map((s) => s.cpuUsPerRequest)),
    rssMb: Math.max(...samples.map((s) => s.rssMb)),
  };
}

/** The bench config for the Switchyard at `root`, written to `path`: fields its config reader
 * does not know are left out (see `fitConfig`); resolves with their paths. */
async function benchConfig(
  upstreamPort: number,
  kvPath: string,
  root: string,
  path: string,
  pacedPort: number,
  extra: Record<string, unknown> = {},
): Promise<string[]> {
  const config = {
    // `trust_proxy` for the many-clients rows, whose client addresses come in X-Forwarded-For.
    server: { hostname: "127.0.0.1", port: 0, trust_proxy: true },
    kv: { path: kvPath },
    providers: [
      {
        id: "bench",
        style: "openai",
        base_url: `http://127.0.0.1:${upstreamPort}/v1`,
        api_key_env: "BENCH_UPSTREAM_KEY",
        max_retries: 0,
      },
      {
        id: "bench-paced",
        style: "openai",
        base_url: `http://127.0.0.1:${pacedPort}/v1`,
        api_key_env: "BENCH_UPSTREAM_KEY",
        max_retries: 0,
      },
      {
        id: "bench-anthropic",
        style: "anthropic",
        base_url: `http://127.0.0.1:${upstreamPort}`,
        api_key_env: "BENCH_UPSTREAM_KEY",
        max_retries: 0,
      },
    ],
    models: [
      {
        id: "bench-openai",
        provider: "bench",
        chat_completions: true,
        function_calling: true,
        access: "key",
      },
      {
        id: "bench-claude",
        provider: "bench-anthropic",
        chat_completions: true,
        function_calling: true,
        access: "key",
      },
      // Anonymous callers' model, for the client-count rows (limits per client IP).
      { id: "bench-open", provider: "bench", chat_completions: true },
      // A model 50 ms from its first token (bench/upstream.ts), for the latency a user feels.
      {
        id: "bench-ttft",
        provider: "bench",
        upstream_model: "bench-ttft-50",
        chat_completions: true,
        access: "key",
      },
      // Streams paced like a model's tokens (the paced upstream), for the paced rows.
      { id: "bench-paced", provider: "bench-paced", chat_completions: true, access: "key" },
      // The same upstream through three routes, for the routing rows (this checkout only: a
      // revision without routes could not read the model).
      ...(root === ROOT ? [ROUTED_MODEL, EMBED_MODEL, GUARDED_MODEL, CACHED_MODEL] : []),
    ],
    // Anonymous limits raised out of the way but still counted in KV, per client IP.
    limits: { anonymous: { chat: { per_minute: 1_000_000_000, per_day: 1_000_000_000 } } },
    // Every record still goes to KV (the default budget of 6,000 a minute would send most of
    // the load to stdout only), so the figures include the whole log path.
    logs: { max_records_per_minute: 100_000_000 },
    ...extra,
  };
  const fitted = await fitConfig(config, root);
  await Deno.writeTextFile(path, JSON.stringify(fitted.config, null, 2));
  return fitted.dropped;
}

function fmt(n: number, digits = 2): string {
  return Number.isFinite(n) ? n.toFixed(digits) : "n/a";
}

/** A fresh KV file with the bench key in it, and the config pointing at the upstream, for the
 * Switchyard at `root` (this checkout's unless `--against`'s worktree). */
async function benchSetup(
  name: string,
  upstreamPort: number,
  root = ROOT,
  pacedPort = upstreamPort,
  extra: Record<string, unknown> = {},
) {
  // Under the data/ of the Switchyard that reads them: the start task reads and writes there.
  const dir = `${root}data/bench`;
  await Deno.mkdir(dir, { recursive: true });
  const kvPath = `${dir}/${name}.kv.sqlite`;
  for (const f of [kvPath, `${kvPath}-wal`, `${kvPath}-shm`]) await Deno.remove(f).catch(() => {});
  const key = await createBenchKey(root, kvPath);
  await writeLogHistory(root, kvPath, args.logHistory);
  const configPath = root === ROOT && name === "bench"
    ? `${dir}/switchyard.bench.json`
    : `${dir}/${name}.bench.json`;
  const dropped = await benchConfig(upstreamPort, kvPath, root, configPath, pacedPort, extra);
  return { key, configPath, dropped };
}

/** Starts the fake upstream on core 1. */
function startUpstream(name: string, port: number, env: Record<string, string>): Promise<Proc> {
  return spawn(name, 1, [Deno.execPath(), "run", "-A", `${ROOT}bench/upstream.ts`], {
    PORT: String(port),
    ...env,
  }, port);
}

/** Starts a baseline proxy of `bench/` on core 0, in front of the upstream at `upstreamPort`:
 * the pass-through (`passthrough.ts`), the JavaScript-stream floor (`js_stream_floor.ts`) or
 * the floor with an HTTP/1.1 server of its own (`http1_floor.ts`). */
function startProxy(
  name: string,
  upstreamPort: number,
  script = "passthrough.ts",
): Promise<Proc> {
  const port = freePort();
  return spawn(name, 0, [Deno.execPath(), "run", "-A", `${ROOT}bench/${script}`], {
    PORT: String(port),
    UPSTREAM: `http://127.0.0.1:${upstreamPort}`,
  }, port);
}

/** What `deno task start` of the checkout at `root` gives `deno run` (permissions, V8 flags) and
 * the environment it sets first (`NAME=value` words before `deno`), so that the bench measures
 * what production runs. */
async function startCommand(
  root: string,
): Promise<{ flags: string[]; env: Record<string, string> }> {
  const config = JSON.parse(await Deno.readTextFile(`${root}deno.json`));
  const words = String(config?.tasks?.start ?? "").split(/\s+/);
  const from = words.indexOf("run");
  const to = words.indexOf("main.ts");
  if (from < 0 || to < from) {
    throw new Error(`${root}deno.json: no \`deno run … main.ts\` start task`);
  }
  const env: Record<string, string> = {};
  for (const word of words.slice(0, from)) {
    const eq = word.indexOf("=");
    if (eq > 0) env[word.slice(0, eq)] = word.slice(eq + 1);
  }
  return { flags: words.slice(from + 1, to), env };
}

/** Starts Switchyard (`main.ts`, with `deno task start`'s flags and environment) on core 0: this checkout's,
 * or the one at `root` (run from there, so that its own deno.json applies). */
async function startSwitchyard(
  name: string,
  configPath: string,
  root = ROOT,
  env: Record<string, string> = {},
): Promise<Proc> {
  const port = freePort();
  const start = await startCommand(root);
  let flags = start.flags;
  if (args.v8Prof) {
    await Deno.mkdir(`${OUT}/prof`, { recursive: true });
    const prof = `,--prof,--logfile=${OUT}/prof/%p.log`;
    flags = flags.map((f) => f.startsWith("--v8-flags=") ? f + prof : f);
    if (!flags.some((f) => f.startsWith("--v8-flags="))) {
      flags.unshift(`--v8-flags=${prof.slice(1)}`);
    }
  }
  return spawn(
    name,
    0,
    [Deno.execPath(), "run", ...flags, `${root}main.ts`, "--config", configPath],
    { ...start.env, PORT: String(port), BENCH_UPSTREAM_KEY: "sk-upstream-bench", ...env },
    port,
    root,
  );
}

/** The chat completions URL of a started process. */
function chatUrl(proc: Proc): string {
  return `http://127.0.0.1:${proc.port}/v1/chat/completions`;
}

interface Target {
  label: string;
  proc: Proc;
  url: string;
  model: string;
  key: string | null;
}

/** Throws unless the Switchyard of `t` answers one chat of each bench model with a 200: a
 * revision that cannot serve the bench's requests has no CPU figures worth comparing. */
async function checkAnswers(t: Target): Promise<void> {
  for (const model of ["bench-openai", "bench-claude"]) {
    const res = await fetch(t.url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${t.key}` },
      body: chatBody(model, false),
    });
    const text = await res.text();
    if (res.status !== 200) {
      throw new Error(
        `${t.label} answered a ${model} chat with ${res.status} ${
          text.slice(0, 300)
        } (see ${OUT}/${t.proc.name}.stderr.log)`,
      );
    }
  }
}

async function table(): Promise<void> {
  const upstreamPort = freePort();
  const pacedPort = freePort();
  const { key, configPath } = await benchSetup("bench", upstreamPort, ROOT, pacedPort);
  const procs: Proc[] = [];
  const started = (proc: Proc) => {
    procs.push(proc);
    return proc;
  };
  let tree: Worktree | null = null;
  try {
    if (args.against !== null) {
      await removeStaleWorktrees(ROOT, OUT);
      const added = tree = await addWorktree(ROOT, OUT, args.against);
      atExit.add(() => removeWorktree(ROOT, added.root));
    }
    const upstream = started(await startUpstream("upstream", upstreamPort, { CHUNKS: "20" }));
    const passthrough = started(await startProxy("passthrough", upstreamPort));
    // Streams paced like a model's: PACED_CHUNKS chunks PACED_MS apart.
    const paced = section("paced")
      ? {
        upstream: started(
          await startUpstream("upstream-paced", pacedPort, {
            CHUNKS: String(PACED_CHUNKS),
            DRIP_MS: String(PACED_MS),
          }),
        ),
        passthrough: started(await startProxy("passthrough-paced", pacedPort)),
        jsFloor: started(await startProxy("js-floor-paced", pacedPort, "js_stream_floor.ts")),
        h1Floor: started(await startProxy("h1-floor-paced", pacedPort, "http1_floor.ts")),
      }
      : null;
    let rev: Target | null = null;
    let dropped: string[] = [];
    let revConfigPath = "";
    if (tree) {
      const setup = await benchSetup("rev", upstreamPort, tree.root, pacedPort);
      dropped = setup.dropped;
      revConfigPath = setup.configPath;
      const proc = started(await startSwitchyard("switchyard-rev", setup.configPath, tree.root));
      rev = {
        label: `switchyard@${tree.rev}`,
        proc,
        url: chatUrl(proc),
        model: "bench-openai",
        key: setup.key,
      };
    }
    if (rev) await checkAnswers(rev);
    const switchyard = started(await startSwitchyard("switchyard", configPath));
    const direct: Target = {
      label: "direct",
      proc: upstream,
      url: chatUrl(upstream),
      model: "bench-upstream",
      key: null,
    };
    const pass: Target = {
      label: "passthrough",
      proc: passthrough,
      url: chatUrl(passthrough),
      model: "bench-upstream",
      key: null,
    };
    const sy: Target = {
      label: "switchyard",
      proc: switchyard,
      url: chatUrl(switchyard),
      model: "bench-openai",
      key,
    };
    /** A fresh Switchyard like `t` for the paced rows. */
    const pacedSwitchyard = async (t: Target, name: string, config: string, root: string) => {
      const proc = started(await startSwitchyard(name, config, root));
      return { ...t, proc, url: chatUrl(proc), model: "bench-paced" };
    };
    /** The Switchyards in round `round`'s order: REV and this checkout take turns to go first. */
    const switchyards = (round: number): Target[] =>
      rev ? (round % 2 ? [sy, rev] : [rev, sy]) : [sy];
    // Warm up every target (JIT, connection pools).
    for (const t of [direct, pass, ...switchyards(0)]) {
      await wrk(t.url, 32, chatBody(t.model, false), t.key, t.proc);
    }
    const load = await loadAverage();
    const rows: string[] = [
      `| mode | conns | target | req/s | p50 ms | p99 ms | added p50 ms | added p99 ms | vs pass-through | CPU µs/req | CPU µs/chunk |${
        rev ? ` CPU vs ${tree!.rev} |` : ""
      } peak RSS MB | errors |`,
      `|---|---|---|---|---|---|---|---|---|---|---|${rev ? "---|" : ""}---|---|`,
    ];
    const row = (
      mode: string,
      conns: number,
      label: string,
      s: Sample,
      direct: Sample | null,
      pass: Sample | null,
      base: Sample | null = null,
    ) => {
      const added = (v: number) => direct ? fmt(v) : "";
      // A stream row's CPU per content chunk (`stream 20`: 20 chunks a stream).
      const chunks = Number(/^(?:long prompt )?stream (\d+)/.exec(mode)?.[1] ?? NaN);
      const ratio = pass ? `${fmt((s.rps / pass.rps) * 100, 0)}%` : "";
      const vsRev = rev
        ? ` ${base ? `${fmt((s.cpuUsPerRequest / base.cpuUsPerRequest) * 100, 0)}%` : ""} |`
        : "";
      rows.push(
        `| ${mode} | ${conns} | ${label} | ${fmt(s.rps, 0)} | ${fmt(s.p50)} | ${fmt(s.p99)} | ${
          added(s.p50 - (direct?.p50 ?? 0))
        } | ${added(s.p99 - (direct?.p99 ?? 0))} | ${ratio} | ${fmt(s.cpuUsPerRequest, 0)} | ${
          chunks ? fmt(s.cpuUsPerRequest / chunks, 1) : ""
        } |${vsRev} ${fmt(s.rssMb, 0)} | ${s.errors} |`,
      );
    };
    const results: Record<string, Sample> = {};
    /** The client-count rows against the pass-through, for the summary line. */
    const clientRatios: string[] = [];
    /** This checkout's CPU µs per request over REV's, by row. */
    const cpuRatio: Record<string, number> = {};
    // The gateway rows (a short prompt), then the long-prompt rows (a 100 KB request body).
    const gatewayRows = [
      ...(section("gateway") ? [false, true] : []).flatMap((stream) =>
        [32, 256].map((conns) => ({ stream, conns, promptBytes: 0 }))
      ),
      ...(section("long") ? [false, true] : []).map((stream) => ({
        stream,
        conns: 32,
        promptBytes: LONG_PROMPT_BYTES,
      })),
    ];
    for (const { stream, conns, promptBytes } of gatewayRows) {
      const mode = `${promptBytes ? "long prompt " : ""}${stream ? "stream 20" : "non-stream"}`;
      const samples = new Map<string, Sample[]>();
      for (let round = 0; round < args.rounds; round++) {
        for (const t of [direct, pass, ...switchyards(round)]) {
          const body = chatBody(t.model, stream, promptBytes);
          const s = await wrk(t.url, conns, body, t.key, t.proc);
          samples.set(t.label, [...(samples.get(t.label) ?? []), s]);
        }
      }
      const d = medianSample(samples.get("direct")!);
      const p = medianSample(samples.get("passthrough")!);
      const s = medianSample(samples.get("switchyard")!);
      const r = rev ? medianSample(samples.get(rev.label)!) : null;
      row(mode, conns, "direct", d, null, null);
      row(mode, conns, "passthrough", p, d, null);
      if (rev && r) row(mode, conns, rev.label, r, d, p);
      row(mode, conns, "switchyard", s, d, p, r);
      Object.assign(results, {
        [`${mode} @${conns} direct`]: d,
        [`${mode} @${conns} passthrough`]: p,
        [`${mode} @${conns} switchyard`]: s,
      });
      if (rev && r) {
        results[`${mode} @${conns} ${rev.label}`] = r;
        cpuRatio[`${mode} @${conns}`] = s.cpuUsPerRequest / r.cpuUsPerRequest;
      }
    }
    // The Anthropic adapter prices translation: the same requests to a fake Anthropic upstream,
    // interleaved with the pass-through for the ratio.
    for (const stream of section("anthropic") ? [false, true] : []) {
      const mode = stream ? "stream 20" : "non-stream";
      const claude = new Map<Target, Sample[]>([[sy, []]]);
      if (rev) claude.set(rev, []);
      const passSamples: Sample[] = [];
      for (let round = 0; round < args.rounds; round++) {
        passSamples.push(
          await wrk(pass.url, 32, chatBody("bench-upstream", stream), null, passthrough),
        );
        for (const t of switchyards(round)) {
          claude.get(t)!.push(
            await wrk(t.url, 32, chatBody("bench-claude", stream), t.key, t.proc),
          );
        }
      }
      const passMedian = medianSample(passSamples);
      const s = medianSample(claude.get(sy)!);
      const r = rev ? medianSample(claude.get(rev)!) : null;
      if (rev && r) {
        row(mode, 32, `${rev.label}→anthropic`, r, null, passMedian);
        results[`${mode} @32 ${rev.label}→anthropic`] = r;
        cpuRatio[`${mode} @32 →anthropic`] = s.cpuUsPerRequest / r.cpuUsPerRequest;
      }
      row(mode, 32, "switchyard→anthropic", s, null, passMedian, r);
      results[`${mode} @32 switchyard→anthropic`] = s;
    }
    // Paced streams: PACED_STREAMS at once, each PACED_CHUNKS chunks PACED_MS apart, against
    // the pass-through of the same paced upstream, interleaved.
    if (paced) {
      const targets: Target[] = [
        {
          label: "direct",
          proc: paced.upstream,
          url: chatUrl(paced.upstream),
          model: "bench-upstream",
          key: null,
        },
        {
          label: "passthrough",
          proc: paced.passthrough,
          url: chatUrl(paced.passthrough),
          model: "bench-upstream",
          key: null,
        },
        {
          label: "js-floor",
          proc: paced.jsFloor,
          url: chatUrl(paced.jsFloor),
          model: "bench-upstream",
          key: null,
        },
        {
          label: "h1-floor",
          proc: paced.h1Floor,
          url: chatUrl(paced.h1Floor),
          model: "bench-upstream",
          key: null,
        },
        // Switchyards of their own, started now: the paced pass-through serves only paced
        // streams, so a Switchyard that served the rows before would carry their heap's high
        // water mark into the RSS comparison.
        await pacedSwitchyard(sy, "switchyard-paced", configPath, ROOT),
        ...(rev && tree
          ? [await pacedSwitchyard(rev, "switchyard-rev-paced", revConfigPath, tree.root)]
          : []),
      ];
      // Warm-up (JIT, connection pools) of every paced target alike.
      for (const t of targets) {
        await wrk(t.url, PACED_STREAMS, chatBody(t.model, true), t.key, t.proc, 1, 2);
      }
      const samples = new Map<string, Sample[]>();
      for (let round = 0; round < args.rounds; round++) {
        for (const t of round % 2 ? [...targets].reverse() : targets) {
          const s = await wrk(t.url, PACED_STREAMS, chatBody(t.model, true), t.key, t.proc);
          samples.set(t.label, [...(samples.get(t.label) ?? []), s]);
        }
      }
      const mode = `stream ${PACED_CHUNKS}×${PACED_MS}ms`;
      const d = medianSample(samples.get("direct")!);
      const p = medianSample(samples.get("passthrough")!);
      const s = medianSample(samples.get("switchyard")!);
      row(mode, PACED_STREAMS, "direct", d, null, null);
      const f = medianSample(samples.get("js-floor")!);
      const h = medianSample(samples.get("h1-floor")!);
      row(mode, PACED_STREAMS, "passthrough", p, d, null);
      row(mode, PACED_STREAMS, "h1-floor", h, d, p);
      row(mode, PACED_STREAMS, "js-floor", f, d, p);
      const r = rev ? medianSample(samples.get(rev.label)!) : null;
      if (rev && r) {
        row(mode, PACED_STREAMS, rev.label, r, d, p);
        results[`${mode} @${PACED_STREAMS} ${rev.label}`] = r;
        cpuRatio[`${mode} @${PACED_STREAMS}`] = s.cpuUsPerRequest / r.cpuUsPerRequest;
      }
      row(mode, PACED_STREAMS, "switchyard", s, d, p, r);
      if (rev) {
        // The two Switchyards also loaded at the same time, half the streams each, taking turns
        // to start: the shared host's drift between runs, which moves a paced stream's CPU by a
        // tenth, then weighs on both alike (two checkouts of the same code: 97-100% in each of
        // six rounds of two runs, where the interleaved rows put them at 97-98% then and at
        // 86-124% in earlier sessions). The figure is the median of the rounds' ratios.
        const half = PACED_STREAMS / 2;
        const mine = targets.find((t) => t.label === "switchyard")!;
        const theirs = targets.find((t) => t.label === rev.label)!;
        const paired: number[] = [];
        for (let round = 0; round < args.rounds; round++) {
          const order = round % 2 ? [theirs, mine] : [mine, theirs];
          const [first, second] = await Promise.all(
            order.map((t) => wrk(t.url, half, chatBody(t.model, true), t.key, t.proc)),
          );
          const [m, t] = order[0] === mine ? [first!, second!] : [second!, first!];
          paired.push(m.cpuUsPerRequest / t.cpuUsPerRequest);
        }
        cpuRatio[`${mode} @${half}+${half} at the same time`] = median(paired);
        clientRatios.push(
          `${mode}, this checkout and ${rev.label} loaded at the same time (${half} streams each): ${
            fmt(median(paired) * 100, 0)
          }% of ${rev.label}'s CPU a stream (rounds: ${
            paired.map((x) => fmt(x * 100, 0)).join(", ")
          })`,
        );
      }
      results[`${mode} @${PACED_STREAMS} passthrough`] = p;
      results[`${mode} @${PACED_STREAMS} h1-floor`] = h;
      results[`${mode} @${PACED_STREAMS} js-floor`] = f;
      results[`${mode} @${PACED_STREAMS} switchyard`] = s;
      clientRatios.push(
        `${mode} @${PACED_STREAMS}: switchyard ${fmt(s.cpuUsPerRequest, 0)} µs CPU a stream (${
          fmt(s.cpuUsPerRequest / PACED_CHUNKS, 1)
        } a chunk), ${fmt(s.cpuUsPerRequest / p.cpuUsPerRequest)}× the pass-through's ${
          fmt(p.cpuUsPerRequest, 0)
        }; peak RSS ${fmt(s.rssMb, 0)} MB against ${
          fmt(p.rssMb, 0)
        } MB; the JavaScript-stream floor ${
          fmt(f.cpuUsPerRequest / p.cpuUsPerRequest)
        }× the pass-through's CPU, ${
          fmt(f.rssMb / p.rssMb)
        }× its peak RSS; with a server of its own ${
          fmt(h.cpuUsPerRequest / p.cpuUsPerRequest)
        }× and ${fmt(h.rssMb / p.rssMb)}×; switchyard ${
          fmt(s.cpuUsPerRequest / f.cpuUsPerRequest)
        }× the JavaScript-stream floor's CPU`,
      );
    }
    // Routing: a model with three routes against the same model with one. Two Switchyards of
    // this checkout (each its own KV file and key) are loaded at the same time, one with each
    // model, swapping models every round; the figure is the median of the rounds' ratios, so
    // that the shared host's drift between minutes weighs on both alike.
    if (section("routing")) {
      const setup = await benchSetup("bench-b", upstreamPort, ROOT, pacedPort);
      const other = started(await startSwitchyard("switchyard-b", setup.configPath));
      const b: Target = { ...sy, proc: other, url: chatUrl(other), key: setup.key };
      await wrk(b.url, 32, chatBody("bench-routed", false), b.key, b.proc);
      const single: Sample[] = [];
      const routed: Sample[] = [];
      const paired: number[] = [];
      for (let round = 0; round < args.rounds; round++) {
        const [one, three] = round % 2 ? [b, sy] : [sy, b];
        const [s1, s3] = await Promise.all([
          wrk(one.url, 32, chatBody("bench-openai", false), one.key, one.proc),
          wrk(three.url, 32, chatBody("bench-routed", false), three.key, three.proc),
        ]);
        single.push(s1);
        routed.push(s3);
        paired.push(s3.cpuUsPerRequest / s1.cpuUsPerRequest);
      }
      const one = medianSample(single);
      const three = medianSample(routed);
      row("non-stream 1 route", 32, "switchyard", one, null, null);
      row("non-stream 3 routes", 32, "switchyard", three, null, null);
      results["non-stream 1 route @32 switchyard"] = one;
      results["non-stream 3 routes @32 switchyard"] = three;
      clientRatios.push(
        `3 routes: ${fmt(median(paired) * 100, 0)}% of one route's CPU per request (rounds: ${
          paired.map((r) => fmt(r * 100, 0)).join(", ")
        })`,
      );
    }
    // Guardrails: the same 10 KB prompt to the same upstream through a model with pii and deny
    // guardrails on input and output and through one without, interleaved in each round; the
    // difference in CPU per request is what the guardrails cost.
    for (const stream of section("guardrails") ? [false, true] : []) {
      const mode = `10 KB prompt ${stream ? "stream 20" : "non-stream"}`;
      const plain: Sample[] = [];
      const guarded: Sample[] = [];
      await wrk(
        sy.url,
        32,
        chatBody("bench-guarded", stream, GUARDED_PROMPT_BYTES),
        key,
        switchyard,
      );
      for (let round = 0; round < args.rounds; round++) {
        const order = round % 2
          ? ["bench-guarded", "bench-openai"]
          : ["bench-openai", "bench-guarded"];
        for (const model of order) {
          const body = chatBody(model, stream, GUARDED_PROMPT_BYTES);
          const s = await wrk(sy.url, 32, body, key, switchyard);
          (model === "bench-guarded" ? guarded : plain).push(s);
        }
      }
      const p = medianSample(plain);
      const g = medianSample(guarded);
      row(`${mode} no guardrails`, 32, "switchyard", p, null, null);
      row(`${mode} pii+deny in+out`, 32, "switchyard", g, null, null);
      results[`${mode} no guardrails @32 switchyard`] = p;
      results[`${mode} guardrails @32 switchyard`] = g;
      clientRatios.push(
        `guardrails (pii + deny, input and output) on a 10 KB prompt, ${
          stream ? "stream 20" : "non-stream"
        }: ${fmt(g.cpuUsPerRequest, 0)} µs CPU per request against ${
          fmt(p.cpuUsPerRequest, 0)
        } without (+${fmt(g.cpuUsPerRequest - p.cpuUsPerRequest, 0)} µs, ${
          fmt((g.cpuUsPerRequest / p.cpuUsPerRequest) * 100, 0)
        }%)`,
      );
    }
    // Embeddings: a batch of EMBED_INPUTS inputs, base64, through this checkout against the
    // pass-through, interleaved (the vectors pass through as the upstream wrote them).
    if (section("embeddings")) {
      const embedUrl = (proc: Proc) => `http://127.0.0.1:${proc.port}/v1/embeddings`;
      const passSamples: Sample[] = [];
      const sySamples: Sample[] = [];
      for (let round = 0; round < args.rounds; round++) {
        passSamples.push(
          await wrk(embedUrl(passthrough), 32, embedBody("bench-upstream"), null, passthrough),
        );
        sySamples.push(
          await wrk(embedUrl(switchyard), 32, embedBody("bench-embed"), key, switchyard),
        );
      }
      const p = medianSample(passSamples);
      const s = medianSample(sySamples);
      const mode = `embeddings ${EMBED_INPUTS} base64`;
      row(mode, 32, "passthrough", p, null, null);
      row(mode, 32, "switchyard", s, null, p);
      results[`${mode} @32 passthrough`] = p;
      results[`${mode} @32 switchyard`] = s;
      clientRatios.push(
        `${mode}: ${
          fmt(s.cpuUsPerRequest / p.cpuUsPerRequest)
        }× the pass-through's CPU per request (${fmt(s.cpuUsPerRequest, 0)} against ${
          fmt(p.cpuUsPerRequest, 0)
        } µs), ${fmt((s.rps / p.rps) * 100, 0)}% of its req/s`,
      );
    }
    // Agent-shaped turns (a Claude Code turn through /v1/messages, a Codex turn through
    // /v1/responses: ~250 KB, 20 tools, streamed) against the pass-through of the same bytes,
    // interleaved, to a back end of the same protocol and to one the turn is translated for;
    // then each one's unloaded time to the first byte.
    const agentLatency: string[] = [];
    if (section("agents")) {
      const agents = [
        {
          mode: "claude code turn",
          path: "/v1/messages",
          passPath: "/v1/messages",
          body: claudeCodeBody,
          headers: claudeCodeHeaders(),
          to: [["bench-claude", "→anthropic"], ["bench-openai", "→openai (translated)"]],
        },
        {
          mode: "codex turn",
          path: "/v1/responses",
          passPath: "/v1/chat/completions",
          body: codexBody,
          headers: {},
          to: [["bench-openai", "→openai (translated)"], [
            "bench-claude",
            "→anthropic (translated)",
          ]],
        },
      ] as const;
      for (const agent of agents) {
        const passUrl = `http://127.0.0.1:${passthrough.port}${agent.passPath}`;
        const syUrl = `http://127.0.0.1:${switchyard.port}${agent.path}`;
        const passBody = agent.body("bench-upstream");
        const bodies = agent.to.map(([model]) => agent.body(model));
        for (const body of bodies) {
          await wrk(syUrl, 32, body, key, switchyard, 1, 2, agent.headers);
        }
        const passSamples: Sample[] = [];
        const sySamples: Sample[][] = agent.to.map(() => []);
        for (let round = 0; round < args.rounds; round++) {
          passSamples.push(
            await wrk(passUrl, 32, passBody, null, passthrough, 1, args.seconds, agent.headers),
          );
          for (const [i, body] of bodies.entries()) {
            sySamples[i]!.push(
              await wrk(syUrl, 32, body, key, switchyard, 1, args.seconds, agent.headers),
            );
          }
        }
        const p = medianSample(passSamples);
        const mode = `${agent.mode} ${Math.round(passBody.length / 1024)} KB`;
        row(mode, 32, "passthrough", p, null, null);
        results[`${mode} @32 passthrough`] = p;
        const firstBytes = [
          `pass-through ${
            fmt(
              await timeTo(passUrl, passBody, null, "first", { extraHeaders: agent.headers }),
              3,
            )
          } ms`,
        ];
        for (const [i, [, label]] of agent.to.entries()) {
          const s = medianSample(sySamples[i]!);
          row(mode, 32, `switchyard${label}`, s, null, p);
          results[`${mode} @32 switchyard${label}`] = s;
          clientRatios.push(
            `${agent.mode} ${label}: ${
              fmt(s.cpuUsPerRequest / p.cpuUsPerRequest)
            }× the pass-through's CPU per request`,
          );
          const first = await timeTo(syUrl, bodies[i]!, key, "first", {
            extraHeaders: agent.headers,
          });
          firstBytes.push(`switchyard${label} ${fmt(first, 3)} ms`);
        }
        agentLatency.push(`${agent.mode}: ${firstBytes.join(", ")}`);
      }
    }
    // The response cache: the same request answered from the cache (every request after the
    // first a hit: no upstream call) against the same model without a cache (each request called
    // through to the fake upstream), interleaved, with the pass-through alongside.
    for (const stream of section("cache") ? [false, true] : []) {
      const mode = stream ? "stream 20" : "non-stream";
      const calls = { pass: [] as Sample[], through: [] as Sample[], hits: [] as Sample[] };
      await wrk(sy.url, 32, chatBody("bench-cached", stream), key, switchyard, 1, 2);
      for (let round = 0; round < args.rounds; round++) {
        calls.pass.push(
          await wrk(pass.url, 32, chatBody("bench-upstream", stream), null, passthrough),
        );
        const order = round % 2 ? ["hits", "through"] as const : ["through", "hits"] as const;
        for (const which of order) {
          const model = which === "hits" ? "bench-cached" : "bench-openai";
          calls[which].push(await wrk(sy.url, 32, chatBody(model, stream), key, switchyard));
        }
      }
      const p = medianSample(calls.pass);
      const through = medianSample(calls.through);
      const hits = medianSample(calls.hits);
      row(mode, 32, "passthrough", p, null, null);
      row(mode, 32, "switchyard→upstream", through, null, p);
      row(mode, 32, "switchyard cache hit", hits, null, p);
      results[`${mode} @32 switchyard→upstream (cache rows)`] = through;
      results[`${mode} @32 switchyard cache hit`] = hits;
      clientRatios.push(
        `cache hit, ${mode}: ${fmt(hits.cpuUsPerRequest, 0)} µs CPU per request, ${
          fmt((hits.cpuUsPerRequest / through.cpuUsPerRequest) * 100, 0)
        }% of a call through to the upstream (${fmt(through.cpuUsPerRequest, 0)} µs)`,
      );
    }
    // Limits are counted per client: one anonymous client, then 10,000 distinct ones (a new
    // X-Forwarded-For address per request), each against the pass-through in the same rounds.
    for (const clients of section("clients") ? [1, CLIENTS] : []) {
      const mode = clients === 1 ? "anon 1 client" : `anon ${clients} clients`;
      const anonymous = new Map<Target, Sample[]>([[sy, []]]);
      if (rev) anonymous.set(rev, []);
      const passSamples: Sample[] = [];
      for (let round = 0; round < args.rounds; round++) {
        const body = chatBody("bench-upstream", false);
        passSamples.push(await wrk(pass.url, 32, body, null, passthrough, clients));
        for (const t of switchyards(round)) {
          const open = chatBody("bench-open", false);
          anonymous.get(t)!.push(await wrk(t.url, 32, open, null, t.proc, clients));
        }
      }
      const p = medianSample(passSamples);
      const s = medianSample(anonymous.get(sy)!);
      const r = rev ? medianSample(anonymous.get(rev)!) : null;
      row(mode, 32, "passthrough", p, null, null);
      if (rev && r) {
        row(mode, 32, rev.label, r, null, p);
        results[`${mode} @32 ${rev.label}`] = r;
        cpuRatio[`${mode} @32`] = s.cpuUsPerRequest / r.cpuUsPerRequest;
      }
      row(mode, 32, "switchyard", s, null, p, r);
      results[`${mode} @32 passthrough`] = p;
      results[`${mode} @32 switchyard`] = s;
      clientRatios.push(
        `${mode}: ${fmt((s.rps / p.rps) * 100, 0)}% of the pass-through's req/s, ${
          fmt(s.cpuUsPerRequest / p.cpuUsPerRequest)
        }× its CPU per request`,
      );
    }
    // Unloaded latency: a stream's first byte, and a non-stream answer's last byte.
    const unloaded = async (stream: boolean) => {
      const times: Record<string, number> = {};
      for (const t of [direct, pass, sy, ...(rev ? [rev] : [])]) {
        const body = chatBody(t.model, stream);
        times[t.label] = await timeTo(t.url, body, t.key, stream ? "first" : "last");
      }
      return times;
    };
    const latency = { ttfb: await unloaded(true), ttlb: await unloaded(false) };
    // Against a model 50 ms from its first token, as real models are (and more): what is left
    // of the gateway's added time once the upstream takes time of its own.
    const realistic: Record<string, number> = {};
    for (
      const [t, model] of [[direct, "bench-ttft-50"], [pass, "bench-ttft-50"], [
        sy,
        "bench-ttft",
      ]] as const
    ) {
      realistic[t.label] = await timeTo(t.url, chatBody(model, true), t.key, "first", { n: 100 });
    }
    // The same on a new connection per request, as curl and many clients make them.
    const freshLatency: Record<string, Record<string, number>> = { ttfb: {}, ttlb: {} };
    for (const stream of [true, false]) {
      for (const t of [direct, pass, sy]) {
        freshLatency[stream ? "ttfb" : "ttlb"]![t.label] = await timeTo(
          t.url,
          chatBody(t.model, stream),
          t.key,
          stream ? "first" : "last",
          { fresh: true },
        );
      }
    }
    // What the admission waits for on this disk, alone: one counter's commit, back to back and
    // after an idle gap (as between one person's requests).
    const commits = await kvCommitTimes(`${OUT}/kv-commit-probe.sqlite`);
    console.log(
      `\nSwitchyard load benchmark: ${args.seconds} s per run, ${args.rounds} interleaved rounds (medians; peak RSS is the largest seen), ${args.logHistory} rows of request records (${
        args.logHistory * 100
      } records) in each Switchyard's KV before it started, taskset ${
        TASKSET ? "on (gateways on core 0; upstream and wrk on core 1)" : "off"
      }, Deno ${Deno.version.deno}, load average ${load} before the runs and ${await loadAverage()} after\n`,
    );
    if (tree && rev) {
      console.log(
        `${rev.label} is ${tree.commit}, checked out in ${tree.root}; config fields left out for it: ${
          dropped.length ? dropped.join(", ") : "none"
        }\n`,
      );
    }
    console.log(rows.join("\n"));
    console.log("");
    for (
      const [what, times] of [
        ["time to first byte of a stream", latency.ttfb],
        ["time to last byte of a non-stream answer", latency.ttlb],
      ] as const
    ) {
      console.log(
        `Unloaded ${what} (median of 200): direct ${fmt(times.direct!, 3)} ms, pass-through ${
          fmt(times.passthrough!, 3)
        } ms, switchyard ${fmt(times.switchyard!, 3)} ms (switchyard − pass-through = ${
          fmt(times.switchyard! - times.passthrough!, 3)
        } ms)${rev ? `, ${rev.label} ${fmt(times[rev.label]!, 3)} ms` : ""}`,
      );
    }
    console.log(
      `Peak RSS over the whole run: switchyard ${fmt(await peakRssMb(switchyard.pid), 0)} MB, ${
        rev ? `${rev.label} ${fmt(await peakRssMb(rev.proc.pid), 0)} MB, ` : ""
      }pass-through ${fmt(await peakRssMb(passthrough.pid), 0)} MB, upstream ${
        fmt(await peakRssMb(upstream.pid), 0)
      } MB`,
    );
    for (
      const [what, times] of [
        ["time to first byte of a stream", freshLatency.ttfb!],
        ["time to last byte of a non-stream answer", freshLatency.ttlb!],
      ] as const
    ) {
      console.log(
        `Unloaded ${what}, a new connection per request (median of 200): direct ${
          fmt(times.direct!, 3)
        } ms, pass-through ${fmt(times.passthrough!, 3)} ms, switchyard ${
          fmt(times.switchyard!, 3)
        } ms (switchyard − pass-through = ${fmt(times.switchyard! - times.passthrough!, 3)} ms)`,
      );
    }
    console.log(
      `Unloaded time to first byte of a stream from a model 50 ms to its first token (median of 100): direct ${
        fmt(realistic.direct!, 3)
      } ms, pass-through ${fmt(realistic.passthrough!, 3)} ms, switchyard ${
        fmt(realistic.switchyard!, 3)
      } ms (switchyard − pass-through = ${
        fmt(realistic.switchyard! - realistic.passthrough!, 3)
      } ms)`,
    );
    if (agentLatency.length) {
      console.log(
        `Unloaded time to first byte of an agent turn (median of 200): ${agentLatency.join("; ")}`,
      );
    }
    console.log(
      `A KV commit of one counter alone on this disk (what an unloaded answer waits for, see Performance): median ${
        fmt(commits.backToBack, 3)
      } ms back to back, ${fmt(commits.afterIdle, 3)} ms after ${IDLE_GAP_MS} ms idle`,
    );
    if (clientRatios.length) console.log(`Client counts and routing: ${clientRatios.join("; ")}`);
    if (tree && rev) {
      console.log(
        `CPU µs per request of this checkout as a percentage of ${rev.label}'s (medians; non-stream should stay within 105%): ${
          Object.entries(cpuRatio).map(([k, v]) => `${k} ${fmt(v * 100, 0)}%`).join(", ")
        }`,
      );
      const failed = Object.entries(results).filter(([k, s]) =>
        s.errors > 0 && (k.includes(rev!.label) || k.includes(" switchyard"))
      );
      if (failed.length) {
        console.log(
          `Warning: errors in ${
            failed.map(([k]) => k).join(", ")
          }: their CPU per request is not comparable (see ${OUT}/*.stderr.log)`,
        );
      }
    }
    await Deno.writeTextFile(
      `${OUT}/results.json`,
      JSON.stringify(
        {
          args,
          load,
          ttfb: latency.ttfb,
          ttlb: latency.ttlb,
          results,
          ...(tree
            ? {
              against: {
                rev: tree.rev,
                commit: tree.commit,
                dropped_config_fields: dropped,
                cpu_ratio: cpuRatio,
              },
            }
            : {}),
        },
        null,
        2,
      ),
    );
  } finally {
    for (const p of procs.reverse()) await stop(p);
    if (tree) {
      await removeWorktree(ROOT, tree.root);
      if (await Deno.stat(tree.root).then(() => true, () => false)) {
        console.error(`could not remove the worktree ${tree.root}: git worktree remove it`);
      }
    }
  }
}

/** The 1-, 5- and 15-minute load averages, as `uptime` shows them. */
async function loadAverage(): Promise<string> {
  const text = await Deno.readTextFile("/proc/loadavg").catch(() => "");
  return text.split(" ").slice(0, 3).join(" ") || "unknown";
}

interface SoakResult {
  ok: number;
  seconds: number;
  cpu: number;
  /** Largest resident set seen during the soak, in MB. */
  rssMb: number;
  /** Resident set after a warm-up, before the soak, in MB. */
  beforeMb: number;
  /** Resident set after the soak and {@link SOAK_IDLE_S} seconds idle, in MB. */
  afterMb: number;
}

/** Seconds a gateway idles after the soak before its resident set is read again. */
const SOAK_IDLE_S = 30;

/** Streams of the soak's warm-up (before the resident set is read as the pre-soak value). */
const SOAK_WARM_UP = 100;

/** The resident set of a process now, in MB. */
async function rssMb(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** Fires `n` concurrent streams at `url` and waits for all of them; resolves with how many
 * were complete: answered 200 and ended with `data: [DONE]`. */
async function streamAll(url: string, body: string, key: string | null, n: number) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key) headers.authorization = `Bearer ${key}`;
  const results = await Promise.all(
    Array.from({ length: n }, async () => {
      const res = await fetch(url, {
        method: "POST",
        headers,
        body,
        signal: AbortSignal.timeout(60_000),
      });
      const text = await res.text();
      return res.status === 200 && text.endsWith("data: [DONE]\n\n");
    }).map((p) => p.catch(() => false)),
  );
  return results.filter(Boolean).length;
}

/** One gateway's soak: a warm-up, its resident set, `n` concurrent streams (CPU, the largest
 * resident set), then the resident set after {@link SOAK_IDLE_S} seconds idle. */
async function soakRun(proc: Proc, url: string, body: string, key: string | null, n: number) {
  await streamAll(url, body, key, Math.min(n, SOAK_WARM_UP));
  const beforeMb = await rssMb(proc.pid);
  const cpu0 = await cpuSeconds(proc.pid);
  const rss = watchRss(proc.pid);
  const t0 = performance.now();
  const ok = await streamAll(url, body, key, n);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = (await cpuSeconds(proc.pid)) - cpu0;
  const peak = await rss.stop();
  await new Promise((r) => setTimeout(r, SOAK_IDLE_S * 1000));
  const result: SoakResult = {
    ok,
    seconds,
    cpu,
    rssMb: peak,
    beforeMb,
    afterMb: await rssMb(proc.pid),
  };
  return result;
}

async function soak(): Promise<void> {
  const n = args.streams;
  const upstreamPort = freePort();
  const { key, configPath } = await benchSetup("soak", upstreamPort);
  const upstream = await startUpstream("soak-upstream", upstreamPort, {
    CHUNKS: "100",
    DRIP_MS: "100",
  });
  const runs = [
    [
      "passthrough",
      () => startProxy("soak-passthrough", upstreamPort),
      "bench-upstream",
      null,
    ],
    ["switchyard", () => startSwitchyard("soak-switchyard", configPath), "bench-openai", key],
  ] as const;
  const results: [string, SoakResult][] = [];
  try {
    // Each gateway gets a fresh process, so that its resident set is this soak's alone.
    for (const [label, start, model, auth] of runs) {
      const proc = await start();
      try {
        results.push([label, await soakRun(proc, chatUrl(proc), chatBody(model, true), auth, n)]);
      } finally {
        await stop(proc);
      }
    }
  } finally {
    await stop(upstream);
  }
  console.log(
    `\nSoak: ${n} concurrent streams, 100 chunks each at 100 ms intervals (10 s per stream), after a warm-up of ${
      Math.min(n, SOAK_WARM_UP)
    } streams; load average ${await loadAverage()}\n`,
  );
  console.log(
    `| target | completed with [DONE] | stuck or failed | wall s | CPU s | CPU µs/stream | RSS before MB | peak RSS MB | RSS ${SOAK_IDLE_S} s after MB | after vs before |`,
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  for (const [label, r] of results) {
    console.log(
      `| ${label} | ${r.ok}/${n} | ${n - r.ok} | ${fmt(r.seconds, 1)} | ${fmt(r.cpu, 2)} | ${
        fmt((r.cpu * 1e6) / n, 0)
      } | ${fmt(r.beforeMb, 1)} | ${fmt(r.rssMb, 1)} | ${fmt(r.afterMb, 1)} | ${
        fmt((r.afterMb / r.beforeMb - 1) * 100, 0)
      }% |`,
    );
    if (r.ok !== n) Deno.exitCode = 1;
  }
  const [, p] = results[0]!;
  const [, s] = results[1]!;
  console.log(
    `\nSwitchyard's peak RSS ${
      fmt(s.rssMb / p.rssMb)
    }× the pass-through's (target ≤ 1.8×); ${SOAK_IDLE_S} s after the soak its RSS is ${
      fmt((s.afterMb / s.beforeMb - 1) * 100, 0)
    }% off its pre-soak value (target within 20%)`,
  );
}

/** The metrics token of `--metrics`'s Switchyard with metrics on. */
const METRICS_TOKEN = "bench-metrics-token";

/**
 * `--metrics`: two Switchyards of this checkout, one with metrics on (a metrics token, so
 * `/metrics` is served and every request is counted, KV commits timed) and one with
 * `metrics.enabled` false, loaded at the same time in each round (two wrks, the two gateways
 * sharing core 0), so that the machine's drift weighs on both alike; CPU µs per request of each
 * and on/off as the median of the rounds' ratios (the issue's bar: within 105%). Finally `/metrics` is
 * scraped to show that the "on" side counted every request it served.
 */
async function metricsOverhead(): Promise<void> {
  const upstreamPort = freePort();
  const procs: Proc[] = [];
  try {
    procs.push(await startUpstream("upstream", upstreamPort, { CHUNKS: "20" }));
    const targets: Target[] = [];
    for (
      const [label, extra, env] of [
        ["metrics on", {}, { SWITCHYARD_METRICS_TOKEN: METRICS_TOKEN }],
        ["metrics off", { metrics: { enabled: false } }, {}],
      ] as const
    ) {
      const name = label.replace(" ", "-");
      const setup = await benchSetup(name, upstreamPort, ROOT, upstreamPort, extra);
      const proc = await startSwitchyard(`switchyard-${name}`, setup.configPath, ROOT, env);
      procs.push(proc);
      targets.push({ label, proc, url: chatUrl(proc), model: "bench-openai", key: setup.key });
    }
    for (const t of targets) {
      await checkAnswers(t);
      await wrk(t.url, 32, chatBody(t.model, false), t.key, t.proc);
    }
    const load = await loadAverage();
    const rows = [
      "| mode | conns | target | req/s | p50 ms | p99 ms | CPU µs/req | on vs off |",
      "|---|---|---|---|---|---|---|---|",
    ];
    const ratios: string[] = [];
    for (const stream of [false, true]) {
      const mode = stream ? "stream 20" : "non-stream";
      const samples = new Map<string, Sample[]>();
      /** On over off per round: both measured at the same time, on the same core, so that the
       * machine's state (which on a shared host drifts by tens of percent between minutes)
       * weighs on both alike. */
      const paired: number[] = [];
      for (let round = 0; round < args.rounds; round++) {
        const [on, off] = await Promise.all(
          targets.map((t) => wrk(t.url, 32, chatBody(t.model, stream), t.key, t.proc)),
        ) as [Sample, Sample];
        samples.set("metrics on", [...(samples.get("metrics on") ?? []), on]);
        samples.set("metrics off", [...(samples.get("metrics off") ?? []), off]);
        paired.push(on.cpuUsPerRequest / off.cpuUsPerRequest);
      }
      const on = medianSample(samples.get("metrics on")!);
      const off = medianSample(samples.get("metrics off")!);
      const ratio = `${fmt(median(paired) * 100, 1)}%`;
      ratios.push(`${mode} ${ratio} (rounds: ${paired.map((r) => fmt(r * 100, 0)).join(", ")})`);
      for (const [label, s] of [["metrics off", off], ["metrics on", on]] as const) {
        rows.push(
          `| ${mode} | 32 | ${label} | ${fmt(s.rps, 0)} | ${fmt(s.p50)} | ${fmt(s.p99)} | ${
            fmt(s.cpuUsPerRequest, 1)
          } | ${label === "metrics on" ? ratio : ""} |`,
        );
      }
    }
    const scrape = await fetch(`http://127.0.0.1:${targets[0]!.proc.port}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    const text = await scrape.text();
    const counted = text.split("\n")
      .filter((l) => l.startsWith('switchyard_http_requests_total{route="/v1/chat/completions"'))
      .reduce((n, l) => n + Number(l.split(" ").at(-1)), 0);
    console.log(
      `\nMetrics overhead: ${args.seconds} s per run, ${args.rounds} rounds, on and off loaded at the same time (medians; on vs off is the median of the rounds' ratios), taskset ${
        TASKSET ? "on" : "off"
      }, Deno ${Deno.version.deno}, load average ${load} before and ${await loadAverage()} after\n`,
    );
    console.log(rows.join("\n"));
    console.log(`\nCPU per request with metrics on, as a percentage of off: ${ratios.join(", ")}`);
    console.log(`/metrics of the "on" side counted ${counted} chat requests.`);
  } finally {
    for (const proc of procs.reverse()) await stop(proc);
  }
}

/** `--batch`: live requests a second, and the lines of the batch running beside them. */
const LIVE_RPS = 50;
const BATCH_LINES = 20_000;

/** Latencies (ms) of live chat calls sent at {@link LIVE_RPS} for `seconds`, each on its own
 * (an open loop: a slow answer does not delay the next call). */
async function steadyLatencies(url: string, key: string, seconds: number): Promise<number[]> {
  const body = chatBody("bench-openai", false);
  const calls: Promise<number>[] = [];
  const start = performance.now();
  for (let i = 0; i < LIVE_RPS * seconds; i++) {
    const due = start + (i * 1000) / LIVE_RPS;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    calls.push((async () => {
      const sent = performance.now();
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body,
      });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`live call answered ${res.status}`);
      return performance.now() - sent;
    })());
  }
  return await Promise.all(calls);
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/**
 * `--batch`: one Switchyard; in each round, live chat calls at a steady rate alone, then while
 * a batch of {@link BATCH_LINES} lines on the same key and model runs (created, seen running,
 * cancelled after). p50 and p99 of each, and with-batch over without (the issue's bar: within
 * 120%), and the batch's lines a second meanwhile.
 */
async function batchLatency(): Promise<void> {
  const upstreamPort = freePort();
  const procs: Proc[] = [];
  try {
    procs.push(await startUpstream("upstream", upstreamPort, { CHUNKS: "20" }));
    const setup = await benchSetup("batch", upstreamPort);
    const proc = await startSwitchyard("switchyard-batch", setup.configPath);
    procs.push(proc);
    const base = `http://127.0.0.1:${proc.port}/v1`;
    const auth = { authorization: `Bearer ${setup.key}` };
    const lines = Array.from({ length: BATCH_LINES }, (_, i) =>
      JSON.stringify({
        custom_id: `line-${i}`,
        method: "POST",
        url: "/v1/chat/completions",
        body: JSON.parse(chatBody("bench-openai", false)),
      })).join("\n");
    const form = new FormData();
    form.set("purpose", "batch");
    form.set("file", new File([lines], "bench.jsonl"));
    const upload = await fetch(`${base}/files`, { method: "POST", headers: auth, body: form });
    const file = await upload.json();
    if (!upload.ok) throw new Error(`upload: ${JSON.stringify(file)}`);
    const batchState = async (id: string) =>
      await (await fetch(`${base}/batches/${id}`, { headers: auth })).json();
    await steadyLatencies(`${base}/chat/completions`, setup.key, 2); // warm-up
    const rows = [
      "| live calls | p50 ms | p99 ms | batch lines/s | p50 vs alone | p99 vs alone |",
      "|---|---|---|---|---|---|",
    ];
    const alone: number[] = [];
    const beside: number[] = [];
    let lineRates: number[] = [];
    for (let round = 0; round < args.rounds; round++) {
      alone.push(...await steadyLatencies(`${base}/chat/completions`, setup.key, args.seconds));
      const created = await (await fetch(`${base}/batches`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({
          input_file_id: file.id,
          endpoint: "/v1/chat/completions",
          completion_window: "24h",
        }),
      })).json();
      let before = await batchState(created.id);
      while (before.request_counts.completed === 0) {
        await new Promise((r) => setTimeout(r, 50));
        before = await batchState(created.id);
      }
      // Its lines are all queued by now (the start queues them in commits of 100 at first).
      await new Promise((r) => setTimeout(r, 3000));
      before = await batchState(created.id);
      const t0 = performance.now();
      beside.push(...await steadyLatencies(`${base}/chat/completions`, setup.key, args.seconds));
      const after = await batchState(created.id);
      const seconds = (performance.now() - t0) / 1000;
      lineRates.push((after.request_counts.completed - before.request_counts.completed) / seconds);
      if (after.status === "completed") console.error("the batch ended before the live calls did");
      await fetch(`${base}/batches/${created.id}/cancel`, { method: "POST", headers: auth });
    }
    lineRates = lineRates.sort((a, b) => a - b);
    const [p50a, p99a] = [percentile(alone, 0.5), percentile(alone, 0.99)];
    const [p50b, p99b] = [percentile(beside, 0.5), percentile(beside, 0.99)];
    rows.push(`| alone | ${fmt(p50a)} | ${fmt(p99a)} | | | |`);
    rows.push(
      `| beside a batch | ${fmt(p50b)} | ${fmt(p99b)} | ${fmt(median(lineRates), 0)} | ${
        fmt(p50b / p50a * 100, 0)
      }% | ${fmt(p99b / p99a * 100, 0)}% |`,
    );
    console.log(
      `\nLive chat latency beside a batch: ${LIVE_RPS} live calls/s for ${args.seconds} s, ${args.rounds} rounds, one key, taskset ${
        TASKSET ? "on" : "off"
      }, Deno ${Deno.version.deno}\n`,
    );
    console.log(rows.join("\n"));
  } finally {
    for (const proc of procs.reverse()) await stop(proc);
  }
}

await Deno.mkdir(OUT, { recursive: true });
if (args.batch) {
  await batchLatency().catch((e) => {
    console.error(`bench: ${e instanceof Error ? e.stack : String(e)}`);
    Deno.exit(1);
  });
  Deno.exit(0);
}
if (!(await has("wrk")) && !args.soak) {
  console.error("wrk is not installed: installing it with apt-get (Debian package wrk)…");
  const out = await new Deno.Command("sh", {
    args: [
      "-c",
      "apt-get install -y wrk >/dev/null 2>&1 || (apt-get update >/dev/null 2>&1 && apt-get install -y wrk >/dev/null 2>&1)",
    ],
  }).output();
  if (!out.success || !(await has("wrk"))) {
    console.error("could not install wrk; install it (apt-get install wrk) and run again");
    Deno.exit(1);
  }
}
if (args.soak) await soak();
else if (args.only === "slow") {
  // 200 slow uploads' memory (bench/slow_clients.ts), as its own run: no wrk, no table.
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      `${ROOT}bench/slow_clients.ts`,
      "--seconds",
      String(args.seconds * 4),
    ],
  }).output();
  await Deno.stdout.write(out.stdout);
  await Deno.stderr.write(out.stderr);
  if (!out.success) Deno.exit(1);
} else {
  await (args.metrics ? metricsOverhead() : table()).catch((e) => {
    console.error(`bench: ${e instanceof Error ? e.message : String(e)}`);
    Deno.exit(1);
  });
}
