/**
 * Helpers for the end-to-end attack tests (tests/hardening_test.ts): start `main.ts` as a real
 * process with a default-like config, its own port and KV file; watch it while an attack runs
 * (`/healthz` latency every ~100 ms, VmRSS and VmHWM from /proc); talk raw HTTP/1.1 over TCP;
 * build hostile PNG files.
 *
 * Nothing here waits without a bound: every fetch carries an `AbortSignal.timeout`, every raw
 * read a deadline, and {@link Gateway.stop} ends with SIGKILL.
 */
import type { LogRecord } from "../../src/log/record.ts";
import assert from "node:assert/strict";
import { dataTempDir, startFlagsSync } from "./process.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const MAIN = `${ROOT}main.ts`;

/** The admin token every gateway started here gets (`SWITCHYARD_ADMIN_TOKEN`). */
export const ADMIN_TOKEN = "hardening-admin-token-5f2c9a71e3b0d8";

/** The provider that {@link defaultLikeConfig} adds: the simulator, one token a second. */
export const SLOW_MODEL = "sim-slow";
export const SLOW_TOKEN_DELAY_MS = 1000;
/** `server.body_timeout_ms` of {@link defaultLikeConfig}. */
export const BODY_TIMEOUT_MS = 1500;

/** Peak RSS a gateway may reach during an attack (the issue's bound). */
export const RSS_LIMIT_MB = 600;
/** `/healthz` must answer within this while an attack runs: a stall detector, not a speed
 * target. Probes on this shared two-core machine took up to 1.3 s under parallel test load
 * with no attack fault; an attack that blocks the event loop for seconds is what it catches. */
export const HEALTH_LIMIT_MS = 3000;
/** Above this RSS the watchdog kills the gateway, so that an attack that does get through
 * cannot take the test machine down with it. */
const WATCHDOG_RSS_MB = 2000;

// deno-lint-ignore no-explicit-any
export type Json = any;

/**
 * The repository's switchyard.json with what every attack test needs on top: loopback only, a
 * short body timeout (1.5 s), a quick shutdown, a slow simulator model (`sim-slow`, 1 s a
 * token, an 8 s deadline) and anonymous chat limits high enough that the tests' own chats are
 * not refused. Everything else (body limit, image limits, other limits, logs) is the default.
 */
export function defaultLikeConfig(): Json {
  const config = JSON.parse(Deno.readTextFileSync(`${ROOT}switchyard.json`));
  config.server = {
    ...config.server,
    hostname: "127.0.0.1",
    body_timeout_ms: BODY_TIMEOUT_MS,
    shutdown_grace_seconds: 1,
  };
  config.providers.push({
    id: "slow",
    style: "simulator",
    token_delay_ms: SLOW_TOKEN_DELAY_MS,
    timeout_ms: 8000,
  });
  config.models.push({
    id: SLOW_MODEL,
    provider: "slow",
    chat_completions: true,
    function_calling: true,
    labels: ["chat completions"],
  });
  config.limits.anonymous.chat = { per_minute: 1000, per_day: 100_000 };
  return config;
}

/** One parsed stdout line of the gateway (a request record), and when the test process read
 * it (performance.now()). */
export type LogLine = LogRecord & { seenAt: number };

/** A running `main.ts`. */
export interface Gateway {
  url: string;
  port: number;
  pid: number;
  dir: string;
  kvPath: string;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  /** The request records it wrote to stdout so far. */
  records(): LogLine[];
  /** The exit status once the process has ended, else `null`. */
  exited(): Deno.CommandStatus | null;
  /** Set when the RSS watchdog killed the process. */
  watchdog: string | null;
  /** VmRSS and VmHWM in MB, `null` once the process is gone. */
  memory(): { rssMb: number; hwmMb: number } | null;
  /** SIGKILL, at once. */
  kill(): void;
  /** SIGTERM, then SIGKILL after 2 s; removes nothing (see {@link Gateway.dispose}). */
  stop(): Promise<Deno.CommandStatus>;
  /** Stops the process (if needed) and removes its temp dir. */
  dispose(): Promise<void>;
}

export interface GatewayOptions {
  /** Changes the default-like config before it is written. */
  config?: (config: Json) => void;
  env?: Record<string, string>;
}

/** Starts `main.ts` on a port it picks (port 0; the start banner says which) with its own KV
 * file in a fresh temp dir. */
export async function startGateway(options: GatewayOptions = {}): Promise<Gateway> {
  const dir = await dataTempDir("switchyard-hardening-");
  const config = defaultLikeConfig();
  options.config?.(config);
  const configPath = `${dir}/switchyard.json`;
  await Deno.writeTextFile(configPath, JSON.stringify(config, null, 2));
  const kvPath = `${dir}/kv.sqlite`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...startFlagsSync(), MAIN, "--config", configPath],
    cwd: ROOT,
    env: {
      PORT: "0",
      SWITCHYARD_KV: kvPath,
      SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN,
      NO_COLOR: "1",
      ...options.env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();

  let stderr = "";
  let stdoutRest = "";
  const records: LogLine[] = [];
  const decoderErr = new TextDecoder();
  const decoderOut = new TextDecoder();
  const drainedErr = child.stderr.pipeTo(
    new WritableStream({ write: (chunk) => void (stderr += decoderErr.decode(chunk)) }),
  ).catch(() => {});
  const drainedOut = child.stdout.pipeTo(
    new WritableStream({
      write(chunk) {
        stdoutRest += decoderOut.decode(chunk, { stream: true });
        const lines = stdoutRest.split("\n");
        stdoutRest = lines.pop()!;
        const seenAt = performance.now();
        for (const line of lines) {
          if (line === "") continue;
          try {
            records.push({ ...JSON.parse(line), seenAt });
          } catch {
            // Not a record; ignore.
          }
        }
      },
    }),
  ).catch(() => {});
  let status: Deno.CommandStatus | null = null;
  const ended = child.status.then((s) => (status = s));

  const gateway: Gateway = {
    // Set from the start banner below.
    url: "",
    port: 0,
    pid: child.pid,
    dir,
    kvPath,
    watchdog: null,
    stderr: () => stderr,
    records: () => records,
    exited: () => status,
    memory: () => readMemory(child.pid),
    kill() {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    },
    async stop() {
      if (status === null) {
        try {
          child.kill("SIGTERM");
        } catch {
          // Already gone.
        }
        const timer = setTimeout(() => {
          try {
            child.kill("SIGKILL");
          } catch {
            // Already gone.
          }
        }, 2000);
        await ended;
        clearTimeout(timer);
      }
      await Promise.all([drainedErr, drainedOut]);
      return status!;
    },
    async dispose() {
      await gateway.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };

  const deadline = Date.now() + 30_000;
  for (;;) {
    if (status !== null) {
      await gateway.dispose();
      throw new Error(`the gateway exited at start-up (${JSON.stringify(status)}):\n${stderr}`);
    }
    const banner = gateway.port === 0 ? stderr.match(/listening on http:\/\/[^\s;]+:(\d+)/) : null;
    if (banner) {
      gateway.port = Number(banner[1]);
      gateway.url = `http://127.0.0.1:${gateway.port}`;
    }
    if (gateway.port !== 0) {
      try {
        const res = await fetch(`${gateway.url}/healthz`, { signal: AbortSignal.timeout(1000) });
        await res.body?.cancel();
        if (res.ok) break;
      } catch {
        // Not answering yet.
      }
    }
    if (Date.now() > deadline) {
      await gateway.dispose();
      throw new Error(`the gateway did not start:\n${stderr}`);
    }
    await sleep(50);
  }
  return gateway;
}

/** VmRSS and VmHWM of a process in MB, or `null` when it is gone. */
export function readMemory(pid: number): { rssMb: number; hwmMb: number } | null {
  let text: string;
  try {
    text = Deno.readTextFileSync(`/proc/${pid}/status`);
  } catch {
    return null;
  }
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text)?.[1]);
  const rss = kb("VmRSS");
  const hwm = kb("VmHWM");
  if (!Number.isFinite(rss)) return null; // a zombie has no memory lines
  return { rssMb: rss / 1024, hwmMb: hwm / 1024 };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** What a watch of the gateway saw while an attack ran. */
export interface Watch {
  /** `/healthz` probes sent, their slowest latency, and the ones that failed or were not 200. */
  probes: number;
  maxHealthMs: number;
  healthFailures: string[];
  /** Peak VmRSS sampled every ~50 ms, and VmHWM at the end (MB). */
  peakRssMb: number;
  hwmMb: number;
  /** VmRSS when the watch started. */
  startRssMb: number;
  /** How long the attack took. */
  ms: number;
}

export interface WatchOptions {
  /** The `/healthz` status expected (default 200); anything else is a failure. */
  healthStatus?: number;
}

/**
 * Runs `attack` while probing `/healthz` every ~100 ms (one probe at a time, each with a 3 s
 * timeout) and sampling the process's memory every ~50 ms; a watchdog kills the process above
 * 2 GB RSS.
 */
export async function watch<T>(
  gateway: Gateway,
  attack: () => Promise<T>,
  options: WatchOptions = {},
): Promise<{ result: T; watch: Watch }> {
  const expected = options.healthStatus ?? 200;
  const start = readMemory(gateway.pid);
  const w: Watch = {
    probes: 0,
    maxHealthMs: 0,
    healthFailures: [],
    peakRssMb: start?.rssMb ?? 0,
    hwmMb: start?.hwmMb ?? 0,
    startRssMb: start?.rssMb ?? 0,
    ms: 0,
  };
  let stopped = false;
  const sampler = (async () => {
    while (!stopped) {
      const m = readMemory(gateway.pid);
      if (m) {
        w.peakRssMb = Math.max(w.peakRssMb, m.rssMb);
        w.hwmMb = Math.max(w.hwmMb, m.hwmMb);
        if (m.rssMb > WATCHDOG_RSS_MB && gateway.watchdog === null) {
          gateway.watchdog = `killed by the test's watchdog at ${Math.round(m.rssMb)} MB RSS`;
          gateway.kill();
        }
      }
      await sleep(50);
    }
  })();
  const prober = (async () => {
    while (!stopped) {
      const t0 = performance.now();
      try {
        const res = await fetch(`${gateway.url}/healthz`, { signal: AbortSignal.timeout(3000) });
        await res.arrayBuffer();
        if (res.status !== expected) w.healthFailures.push(`status ${res.status}`);
      } catch (e) {
        w.healthFailures.push(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
      }
      w.probes++;
      w.maxHealthMs = Math.max(w.maxHealthMs, performance.now() - t0);
      await sleep(100);
    }
  })();
  const t0 = performance.now();
  try {
    const result = await attack();
    w.ms = performance.now() - t0;
    // One more probe round after the attack, so a stall at its very end is seen too.
    await sleep(150);
    return { result, watch: w };
  } finally {
    stopped = true;
    await Promise.all([sampler, prober]);
    const end = readMemory(gateway.pid);
    if (end) w.hwmMb = Math.max(w.hwmMb, end.hwmMb);
    console.log(`    ${describeWatch(w)}${gateway.watchdog ? `; ${gateway.watchdog}` : ""}`);
  }
}

/** A short description of a watch for assertion messages and the test output. */
export function describeWatch(w: Watch): string {
  return `attack ${Math.round(w.ms)} ms; /healthz max ${Math.round(w.maxHealthMs)} ms over ` +
    `${w.probes} probes${
      w.healthFailures.length ? ` (${w.healthFailures.length} failed: ${w.healthFailures[0]})` : ""
    }; RSS ${Math.round(w.startRssMb)} → peak ${Math.round(w.peakRssMb)} MB, VmHWM ${
      Math.round(w.hwmMb)
    } MB`;
}

/**
 * The issue's "Done when", after an attack: `/healthz` kept answering 200 in under a second,
 * RSS (sampled and VmHWM) stayed under 600 MB, the process is alive, and an ordinary chat to
 * sim-chat gets 200.
 */
export async function assertSurvived(
  gateway: Gateway,
  w: Watch,
  options: { chat?: boolean; health?: boolean } = {},
): Promise<void> {
  const what = describeWatch(w);
  assert.equal(gateway.watchdog, null, `${gateway.watchdog} (${what})`);
  assert.equal(
    gateway.exited(),
    null,
    `the gateway died: ${JSON.stringify(gateway.exited())} (${what})\n${tail(gateway.stderr())}`,
  );
  assert.ok(
    w.peakRssMb < RSS_LIMIT_MB && w.hwmMb < RSS_LIMIT_MB,
    `RSS over ${RSS_LIMIT_MB} MB (${what})`,
  );
  if (options.health !== false) {
    assert.ok(w.probes > 0, `no /healthz probe completed (${what})`);
    assert.ok(w.maxHealthMs < HEALTH_LIMIT_MS, `/healthz was slow (${what})`);
    assert.deepEqual(w.healthFailures, [], `/healthz failed (${what})`);
  }
  if (options.chat !== false) {
    const res = await call(gateway, "/v1/chat/completions", {
      method: "POST",
      body: { model: "sim-chat", messages: [{ role: "user", content: "still there?" }] },
      timeoutMs: 5000,
    });
    assert.equal(res.status, 200, `an ordinary chat afterwards: ${res.summary}`);
  }
}

/** The last lines of a text (for messages). */
export function tail(text: string, lines = 15): string {
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}

/** How an HTTP call ended: a status (`body` read in full), or `cut` (the connection failed),
 * or `timeout`. */
export interface Outcome {
  kind: "response" | "cut" | "timeout";
  status: number;
  headers: Headers;
  text: string;
  json: Json;
  ms: number;
  /** One line for assertion messages. */
  summary: string;
}

export interface CallOptions {
  method?: string;
  /** A JSON value (stringified), or raw text/bytes as is. */
  body?: unknown;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

/** One request to the gateway with a hard timeout; never throws for network trouble. */
export async function call(
  gateway: Gateway,
  path: string,
  options: CallOptions = {},
): Promise<Outcome> {
  const headers: Record<string, string> = { ...options.headers };
  let body: BodyInit | undefined;
  if (typeof options.body === "string" || options.body instanceof Uint8Array) {
    body = options.body as BodyInit;
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
  }
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) {
    headers["content-type"] = "application/json";
  }
  const t0 = performance.now();
  const timeoutMs = options.timeoutMs ?? 5000;
  const out: Outcome = {
    kind: "response",
    status: 0,
    headers: new Headers(),
    text: "",
    json: undefined,
    ms: 0,
    summary: "",
  };
  try {
    const res = await fetch(`${gateway.url}${path}`, {
      method: options.method ?? (body === undefined ? "GET" : "POST"),
      headers,
      ...(body === undefined ? {} : { body }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    out.status = res.status;
    out.headers = res.headers;
    out.text = await res.text();
    try {
      out.json = JSON.parse(out.text);
    } catch {
      out.json = undefined;
    }
  } catch (e) {
    const name = e instanceof Error ? e.name : "";
    out.kind = name === "TimeoutError" || name === "AbortError" ? "timeout" : "cut";
    out.text = e instanceof Error ? e.message : String(e);
  }
  out.ms = performance.now() - t0;
  out.summary = out.kind === "response"
    ? `${out.status} after ${Math.round(out.ms)} ms: ${clip(out.text, 300)}`
    : `${out.kind} after ${Math.round(out.ms)} ms (${clip(out.text, 200)})`;
  return out;
}

export function clip(text: string, n: number): string {
  return text.length <= n ? text : `${text.slice(0, n)}… (${text.length} chars)`;
}

/** Whether a body is the API's JSON error shape. */
export function isErrorBody(json: Json): boolean {
  return typeof json?.error?.message === "string" && typeof json?.error?.type === "string";
}

/**
 * The attack request was contained: within `withinMs` it got a JSON answer (a 4xx/5xx error in
 * the API's error shape, or a 2xx JSON body of at most `maxBodyBytes`), or the connection was
 * cut. A timeout is a failure, and so is a 500 `internal_error` (an exception nobody handled).
 */
export function assertContained(
  out: Outcome,
  withinMs: number,
  options: { maxBodyBytes?: number; allowOk?: boolean } = {},
): void {
  assert.notEqual(out.kind, "timeout", `no answer: ${out.summary}`);
  assert.ok(out.ms < withinMs, `took too long: ${out.summary}`);
  if (out.kind === "cut") return;
  if (out.status >= 400) {
    assert.ok(isErrorBody(out.json), `a ${out.status} without a JSON error body: ${out.summary}`);
    // The catch-all for unhandled exceptions (with a stack trace on stderr) is no defence.
    assert.ok(
      !(out.status === 500 && out.json.error.code === "internal_error"),
      `an unhandled error: ${out.summary}`,
    );
    return;
  }
  assert.ok(options.allowOk !== false, `expected an error, got ${out.summary}`);
  assert.ok(out.status >= 200 && out.status < 300, `unexpected status: ${out.summary}`);
  assert.notEqual(out.json, undefined, `a ${out.status} that is not JSON: ${out.summary}`);
  const max = options.maxBodyBytes ?? 1024 * 1024;
  assert.ok(out.text.length <= max, `a ${out.status} of ${out.text.length} bytes: ${out.summary}`);
}

/** Waits until `check` returns something other than `undefined`, or `timeoutMs` passes. */
export async function waitFor<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  stepMs = 20,
): Promise<T | undefined> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (performance.now() > deadline) return undefined;
    await sleep(stepMs);
  }
}

/** Total bytes of the KV file and its SQLite companions (-wal, -shm, -journal). */
export function kvBytes(kvPath: string): number {
  let total = 0;
  for (const suffix of ["", "-wal", "-shm", "-journal"]) {
    try {
      total += Deno.statSync(kvPath + suffix).size;
    } catch {
      // Absent.
    }
  }
  return total;
}

// ---------------------------------------------------------------------------------------------
// Raw HTTP/1.1 over TCP.

/** What came back on a raw connection. */
export interface RawResponse {
  /** The status of the first response, or `null` if none came. */
  status: number | null;
  head: string;
  /** Whether the server closed the connection. */
  closed: boolean;
  /** Milliseconds from the call of {@link RawConnection.response} (or from `since`). */
  ms: number;
}

/** A raw TCP connection to the gateway that reads everything the server sends. */
export class RawConnection {
  #received = new Uint8Array(0);
  #closed = false;
  #waiters: (() => void)[] = [];
  readonly #reading: Promise<void>;

  private constructor(readonly conn: Deno.TcpConn) {
    this.#reading = this.#read();
  }

  static async open(gateway: Gateway): Promise<RawConnection> {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: gateway.port });
    return new RawConnection(conn);
  }

  async #read(): Promise<void> {
    const buf = new Uint8Array(64 * 1024);
    try {
      for (;;) {
        const n = await this.conn.read(buf);
        if (n === null) break;
        const next = new Uint8Array(this.#received.length + n);
        next.set(this.#received);
        next.set(buf.subarray(0, n), this.#received.length);
        this.#received = next;
        this.#wake();
      }
    } catch {
      // Reset or closed by us.
    }
    this.#closed = true;
    this.#wake();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Writes; returns false if the server no longer takes data. */
  async write(data: string | Uint8Array): Promise<boolean> {
    let bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    try {
      while (bytes.length > 0) bytes = bytes.subarray(await this.conn.write(bytes));
      return true;
    } catch {
      return false;
    }
  }

  /** Waits (until `deadline`, a performance.now() time) for a response head or the close. */
  async response(deadline: number, since = performance.now()): Promise<RawResponse> {
    for (;;) {
      const text = new TextDecoder().decode(this.#received);
      const end = text.indexOf("\r\n\r\n");
      if (end >= 0 || this.#closed || performance.now() >= deadline) {
        const head = end >= 0 ? text.slice(0, end) : text;
        const m = /^HTTP\/1\.[01] (\d{3})/.exec(head);
        return {
          status: m ? Number(m[1]) : null,
          head,
          closed: this.#closed,
          ms: performance.now() - since,
        };
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - performance.now()));
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Everything received so far, as text. */
  text(): string {
    return new TextDecoder().decode(this.#received);
  }

  async close(): Promise<void> {
    try {
      this.conn.close();
    } catch {
      // Already closed.
    }
    await this.#reading;
  }
}
