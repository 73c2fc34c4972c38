/**
 * Property-based fuzzing of every endpoint's request validation, over a real port.
 *
 * The gateway runs in a child process (tests/support/fuzz_server.ts: the simulator models of
 * switchyard.json, rate limits no run reaches, the admin API on), so that a request which
 * blocks its event loop or exhausts its heap cannot hang or crash this test: such a request
 * fails the property, and the gateway is killed and started again.
 *
 * For every request it asserts:
 * - an answer within {@link REQUEST_TIMEOUT_MS}, whole (an SSE stream read to its end), and
 *   never a 5xx (nor, in a stream, an error event of a server error);
 * - an error answer is JSON `{error: {message: string, type: string, ...}}` whose `message`
 *   (and `param`) has at most {@link MAX_ERROR_CHARS} characters, even when the request holds
 *   100 KB strings, and shows no trace of a JS exception: no stack lines (`    at `), no
 *   `TypeError:`-style prefixes, no `file://` URLs or `.ts:` source positions (unless the
 *   request itself held that text, which the message may quote).
 *
 * Generators: arbitrary JSON (deep and wide); valid requests with one field mutated (wrong
 * types, 100 KB strings, 5,000-level nesting, huge and non-finite numbers, NaN-ish strings,
 * unicode oddities, 10,000-item arrays, unknown fields); tool and response_format schemas of
 * nasty shapes (recursive `$ref`, huge minItems/minLength…), streamed and not; and raw bodies
 * (invalid JSON or UTF-8, empty, wrong Content-Type).
 *
 * Each property has a run count and a time budget (past it, its remaining runs and shrinks
 * pass unsent), so the file takes under a minute on two cores. On failure fast-check prints
 * the seed and the shrunk case: replay with `FUZZ_SEED=<seed> FUZZ_ONLY=<part of the step
 * name>`. `FUZZ_RUNS=<factor>` scales run counts and budgets; `FUZZ_SURVEY=1` sends every case
 * and lists each distinct failure (fast-check reports only the first of a property);
 * `FUZZ_VERBOSE=1` logs every request with its time.
 */
import fc from "npm:fast-check@4.10.2";

/** How long one request may take, its whole body included. */
const REQUEST_TIMEOUT_MS = 10_000;
/** The longest `error.message` (or `error.param`) an answer may have. */
const MAX_ERROR_CHARS = 2_000;
/** Size of the "huge" strings. */
const HUGE = 100_000;
/** Depth of the deeply nested values. */
const DEEP = 5_000;
/** Length of the long arrays. */
const WIDE = 10_000;

const SEED = Deno.env.get("FUZZ_SEED") ? Number(Deno.env.get("FUZZ_SEED")) : undefined;
const SCALE = Number(Deno.env.get("FUZZ_RUNS") ?? "1") || 1;
/** `FUZZ_VERBOSE=1` logs every request with its time. */
const VERBOSE = Deno.env.get("FUZZ_VERBOSE") === "1";
/** `FUZZ_SURVEY=1` lists every distinct failure instead of stopping at the first. */
const SURVEY = Deno.env.get("FUZZ_SURVEY") === "1";
/** `FUZZ_ONLY=<text>` runs only the properties whose name holds the text. */
const ONLY = Deno.env.get("FUZZ_ONLY");

// ---------------------------------------------------------------------------------------------
// The gateway under test, in a child process

/** What the child prints once it listens. */
interface GatewayInfo {
  url: string;
  adminToken: string;
  previewKey: string;
  patchKeyId: string;
}

const SERVER_SCRIPT = new URL("./support/fuzz_server.ts", import.meta.url);
const DENO_CONFIG = new URL("../deno.json", import.meta.url);
const STDERR_KEEP = 1024 * 1024;

/** The gateway child process; {@link restart} replaces it after a hang or a crash. */
class Gateway {
  info!: GatewayInfo;
  restarts = 0;
  #child!: Deno.ChildProcess;
  #status!: Promise<Deno.CommandStatus>;
  #exited: Deno.CommandStatus | null = null;
  #drains: Promise<void>[] = [];
  #stderr = "";

  static async start(): Promise<Gateway> {
    const gateway = new Gateway();
    await gateway.#spawn();
    return gateway;
  }

  async #spawn(): Promise<void> {
    this.#stderr = "";
    this.#exited = null;
    this.#child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        `--config=${decodeURIComponent(DENO_CONFIG.pathname)}`,
        "--allow-net=127.0.0.1",
        "--allow-read",
        "--allow-env",
        // A request that exhausts the heap crashes the child in seconds, not the machine.
        "--v8-flags=--max-old-space-size=1024",
        decodeURIComponent(SERVER_SCRIPT.pathname),
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#status = this.#child.status.then((s) => (this.#exited = s));
    const lines = this.#child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    this.#drains = [
      this.#drainStderr(this.#child.stderr.pipeThrough(new TextDecoderStream()).getReader()),
    ];
    let first = "";
    const deadline = setTimeout(() => this.#kill(), 30_000);
    try {
      while (!first.includes("\n")) {
        const { value, done } = await lines.read();
        if (done) {
          throw new Error(`the fuzz gateway did not start:\n${this.#stderr.slice(-4000)}`);
        }
        first += value;
      }
    } finally {
      clearTimeout(deadline);
    }
    this.info = JSON.parse(first.slice(0, first.indexOf("\n")));
    this.#drains.push((async () => {
      while (!(await lines.read()).done) { /* the child writes nothing more */ }
    })());
  }

  async #drainStderr(reader: ReadableStreamDefaultReader<string>): Promise<void> {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      this.#stderr = (this.#stderr + value).slice(-STDERR_KEEP);
    }
  }

  #kill(): void {
    try {
      this.#child.kill("SIGKILL");
    } catch { /* already gone */ }
  }

  /** How the child ended, if it has within `ms`. */
  async exitStatus(ms: number): Promise<Deno.CommandStatus | null> {
    if (this.#exited) return this.#exited;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)));
    const status = await Promise.race([this.#status, late]);
    clearTimeout(timer);
    return status;
  }

  /** The stderr lines that mention `requestId` (the app logs unhandled errors with stacks). */
  async diagnosticsFor(requestId: string | null): Promise<string> {
    if (requestId === null) return "";
    for (let i = 0; i < 20 && !this.#stderr.includes(requestId); i++) await delay(10);
    const lines = this.#stderr.split("\n").filter((l) => l.includes(requestId));
    // The head names the route, the tail holds the error and its stack.
    return lines.map((l) => l.length <= 3000 ? l : `${l.slice(0, 600)} … ${l.slice(-2400)}`)
      .join("\n");
  }

  stderrTail(chars: number): string {
    return this.#stderr.slice(-chars);
  }

  /** Kills the child (stuck or dead) and starts a new one. */
  async restart(): Promise<void> {
    this.restarts++;
    await this.#stop(0);
    await this.#spawn();
  }

  async close(): Promise<void> {
    await this.#stop(3_000);
  }

  async #stop(graceMs: number): Promise<void> {
    // Closing stdin asks the child to shut down; past the grace it is killed.
    await this.#child.stdin.close().catch(() => {});
    if (graceMs > 0) await this.exitStatus(graceMs);
    if (!this.#exited) this.#kill();
    await this.#status;
    await Promise.all(this.#drains);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------------------------------------
// Requests and what every answer must be

/** Who a request is sent as. */
type Auth = "none" | "preview" | "admin" | { bearer: string };

/** One generated request. `{patch_key}` in `path` becomes the id of a key made for PATCH. */
interface Case {
  method: string;
  path: string;
  auth: Auth;
  /** `null`: no Content-Type header. */
  contentType: string | null;
  body: string | Uint8Array<ArrayBuffer> | null;
  /** A short account of the request, for fast-check's report. */
  describe(): string;
}

function makeCase(fields: Omit<Case, "describe">, describe: () => string): Case {
  return Object.assign(fields, { describe, [fc.toStringMethod]: describe });
}

interface Outcome {
  status: number;
  headers: Headers;
  text: string;
  ms: number;
}

const lenient = new TextDecoder();

/** A request that got no whole answer: it timed out, or the connection failed. */
interface NoAnswer {
  kind: "TIMEOUT" | "NO ANSWER";
  detail: string;
}

/** Sends `c` and reads the whole answer; when none comes, restarts the gateway. */
async function exchange(gateway: Gateway, c: Case): Promise<Outcome | NoAnswer> {
  const { info } = gateway;
  const headers = new Headers();
  if (c.contentType !== null) headers.set("content-type", c.contentType);
  if (c.auth === "preview") headers.set("authorization", `Bearer ${info.previewKey}`);
  else if (c.auth === "admin") headers.set("authorization", `Bearer ${info.adminToken}`);
  else if (c.auth !== "none") headers.set("authorization", `Bearer ${c.auth.bearer}`);
  const url = info.url + c.path.replace("{patch_key}", info.patchKeyId);
  const abort = new AbortController();
  const timer = setTimeout(
    () => abort.abort(new Error(`no complete answer within ${REQUEST_TIMEOUT_MS} ms`)),
    REQUEST_TIMEOUT_MS,
  );
  const started = performance.now();
  try {
    const init: RequestInit = { method: c.method, headers, signal: abort.signal };
    if (c.body !== null) init.body = c.body;
    const res = await fetch(url, init);
    const bytes = await res.bytes();
    return {
      status: res.status,
      headers: res.headers,
      text: lenient.decode(bytes),
      ms: performance.now() - started,
    };
  } catch (e) {
    const ms = Math.round(performance.now() - started);
    const exited = await gateway.exitStatus(500);
    const tail = gateway.stderrTail(1500);
    await gateway.restart();
    const timedOut = abort.signal.aborted;
    const how = exited
      ? `the gateway process died (exit code ${exited.code}, signal ${exited.signal})`
      : "the gateway process was still busy (killed and restarted)";
    return {
      kind: timedOut ? "TIMEOUT" : "NO ANSWER",
      detail: `${
        timedOut
          ? `no complete answer within ${REQUEST_TIMEOUT_MS} ms`
          : `no answer after ${ms} ms (${e instanceof Error ? e.message : String(e)})`
      }; ${how}\nits stderr ended with:\n${tail}`,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Text that reads like a JS exception leaking out, not like a validation message. (Each
 * starts with a literal or a line start, so none backtracks over a 100 KB message.) */
const LEAK_PATTERNS: readonly RegExp[] = [
  /^[ \t]+at \S/m, // a stack frame line
  /(?:Type|Range|Syntax|Reference|URI|Eval|Aggregate|Internal)?Error: /, // "TypeError: ..."
  /file:\/\/\S{0,200}/,
  /\.ts:\d*/,
  /\bUncaught\b/,
];

/** What is wrong with an error body (`value` parsed from JSON). */
function errorBodyProblems(value: unknown, request: string): string[] {
  if (typeof value !== "object" || value === null || !("error" in value)) {
    return ["the body has no `error` object"];
  }
  const error = (value as { error: unknown }).error;
  if (typeof error !== "object" || error === null) return ["`error` is not an object"];
  const { message, type, param } = error as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof type !== "string") problems.push(`error.type is not a string (${typeof type})`);
  if (typeof message !== "string") {
    problems.push(`error.message is not a string (${typeof message})`);
  } else {
    if (message.length > MAX_ERROR_CHARS) {
      problems.push(
        `error.message has ${message.length} characters (limit ${MAX_ERROR_CHARS})`,
      );
    }
    for (const pattern of LEAK_PATTERNS) {
      const m = pattern.exec(message);
      if (m && !request.includes(m[0].trim())) {
        problems.push(`error.message looks like a leaked exception: ${JSON.stringify(m[0])}`);
      }
    }
  }
  if (typeof param === "string" && param.length > MAX_ERROR_CHARS) {
    problems.push(`error.param has ${param.length} characters (limit ${MAX_ERROR_CHARS})`);
  }
  return problems;
}

/** What is wrong with an SSE body: events that are not JSON, server errors, no proper end. */
function streamProblems(text: string, request: string): string[] {
  const problems: string[] = [];
  const events = text.split(/\r?\n\r?\n/).filter((e) => e.trim() !== "");
  let ended = false;
  for (const event of events) {
    const data = event.split(/\r?\n/).filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).trimStart()).join("\n");
    if (data === "" || event.startsWith(":")) continue;
    if (ended) problems.push("an event after the end of the stream");
    if (data === "[DONE]") {
      ended = true;
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      problems.push(`an event that is not JSON: ${clip(data, 200)}`);
      continue;
    }
    if (typeof value === "object" && value !== null && "error" in value) {
      ended = true;
      problems.push(...errorBodyProblems(value, request).map((p) => `stream error event: ${p}`));
      const type = (value as { error: { type?: unknown } }).error?.type;
      if (type === "server_error" || type === "upstream_error") {
        problems.push(`the stream ended with a ${type} event (a 5xx in the stream)`);
      }
    }
  }
  if (!ended) problems.push("the stream ended without [DONE] or an error event");
  return problems;
}

/** Everything wrong with the answer to `c`. */
function answerProblems(c: Case, o: Outcome): string[] {
  const request = `${c.path}\n${c.contentType ?? ""}\n${
    typeof c.body === "string" ? c.body : c.body === null ? "" : lenient.decode(c.body)
  }`;
  const type = o.headers.get("content-type") ?? "";
  const problems: string[] = [];
  if (o.status >= 500) problems.push(`status ${o.status}`);
  if (o.status >= 300 && o.status < 400) problems.push(`unexpected status ${o.status}`);
  if (o.status >= 300) {
    if (!/^application\/json\b/i.test(type)) {
      problems.push(`an error answer with Content-Type ${JSON.stringify(type)}, not JSON`);
    }
    let value: unknown;
    try {
      value = JSON.parse(o.text);
    } catch {
      problems.push("the error body is not JSON");
      return problems;
    }
    problems.push(...errorBodyProblems(value, request));
  } else if (o.status !== 204) {
    if (/^text\/event-stream\b/i.test(type)) {
      problems.push(...streamProblems(o.text, request));
    } else if (/^application\/json\b/i.test(type)) {
      try {
        JSON.parse(o.text);
      } catch {
        problems.push("a success body that is not JSON");
      }
    } else {
      problems.push(`a success answer with Content-Type ${JSON.stringify(type)}`);
    }
  }
  return problems;
}

/** A request whose answer broke the rules: the report, and a key grouping alike failures. */
interface Finding {
  signature: string;
  report: string;
}

/** The route of a case, with ids in the path replaced by `:id`. */
function routeOf(c: Case): string {
  const path = c.path.split("?")[0]!
    .replace(/^(\/v1\/models|\/admin\/keys|\/admin\/models)\/.*/s, "$1/:id");
  return `${c.method} ${path}`;
}

/** Sends `c`: `null` when its answer is sound, else what is wrong with it. */
async function inspect(gateway: Gateway, c: Case): Promise<Finding | null> {
  const outcome = await exchange(gateway, c);
  const route = routeOf(c);
  const head = `${c.method} ${clip(c.path, 200)}`;
  if ("kind" in outcome) {
    if (VERBOSE) console.log(`${outcome.kind} ${clip(c.describe(), 300)}`);
    return { signature: `${route} ${outcome.kind}`, report: `${head}: ${outcome.detail}` };
  }
  const problems = answerProblems(c, outcome);
  if (VERBOSE) {
    console.log(`${Math.round(outcome.ms)} ms ${outcome.status} ${clip(c.describe(), 300)}`);
  }
  if (problems.length === 0) return null;
  const requestId = outcome.headers.get("x-request-id");
  const diagnostics = outcome.status >= 500 ? await gateway.diagnosticsFor(requestId) : "";
  let param: unknown = null;
  try {
    param = JSON.parse(outcome.text)?.error?.param;
  } catch { /* not JSON: said among the problems */ }
  const kinds = problems.map((p) => p.replace(/\d+/g, "N").replace(/:.*/s, "")).join("; ");
  return {
    signature: `${route} → ${outcome.status} ${
      typeof param === "string" ? clip(param.replace(/\d+/g, "N"), 80) : ""
    }: ${kinds}`,
    report: `${head} → ${outcome.status} in ${Math.round(outcome.ms)} ms:\n- ${
      problems.join("\n- ")
    }\nrequest body: ${
      typeof c.body === "string" ? clip(c.body, 600) : `${c.body?.length ?? 0} bytes`
    }\nanswer: ${clip(outcome.text, 600)}${diagnostics ? `\nserver log:\n${diagnostics}` : ""}`,
  };
}

// ---------------------------------------------------------------------------------------------
// JSON with raw fragments, and short accounts of big values

/** JSON text spliced into a body as is: numbers JSON.stringify cannot write, deep nesting. */
class Raw {
  constructor(readonly text: string, readonly label: string) {}
}

/** JSON text of `value`, with {@link Raw} fragments spliced in. */
function serialize(value: unknown): string {
  if (value instanceof Raw) return value.text;
  const raws: string[] = [];
  const text = JSON.stringify(
    value,
    (_key, v) => (v instanceof Raw ? `\u0000raw${raws.push(v.text) - 1}\u0000` : v),
  ) ?? "null";
  if (raws.length === 0) return text;
  return text.replace(/"\\u0000raw(\d+)\\u0000"/g, (_m, i) => raws[Number(i)]!);
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…(${text.length} chars)`;
}

/** A readable, bounded account of a value: long strings and arrays are summarised. */
function brief(value: unknown, max = 400): string {
  const shorten = (v: unknown, depth: number): unknown => {
    if (v instanceof Raw) return `<${v.label}>`;
    if (typeof v === "string") {
      return v.length > 60 ? `${v.slice(0, 40)}…<${v.length} chars>` : v;
    }
    if (depth > 8) return "<…>";
    if (Array.isArray(v)) {
      const head = v.slice(0, 5).map((x) => shorten(x, depth + 1));
      return v.length > 5 ? [...head, `<…${v.length} items>`] : head;
    }
    if (typeof v === "object" && v !== null) {
      const entries = Object.entries(v);
      const out: Record<string, unknown> = {};
      for (const [k, x] of entries.slice(0, 12)) out[clip(k, 40)] = shorten(x, depth + 1);
      if (entries.length > 12) out["<…>"] = `${entries.length} keys`;
      return out;
    }
    return v;
  };
  return clip(JSON.stringify(shorten(value, 0)) ?? "undefined", max);
}

// ---------------------------------------------------------------------------------------------
// Nasty values

/** A value to put in a request, and how to name it in a report. */
interface Nasty {
  label: string;
  value: unknown;
}

const nasty = (label: string, value: unknown): Nasty => ({ label, value });
const raw = (label: string, text: string): Nasty => nasty(label, new Raw(text, label));

const PNG_1X1 = "data:image/png;base64," +
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const wrongTypes = fc.constantFrom(
  nasty("null", null),
  nasty("true", true),
  nasty("false", false),
  nasty("0", 0),
  nasty("-1", -1),
  nasty("1.5", 1.5),
  nasty('""', ""),
  nasty('"x"', "x"),
  nasty("[]", []),
  nasty("{}", {}),
  nasty("[null]", [null]),
  nasty('{"a":1}', { a: 1 }),
  nasty("[[[]]]", [[[]]]),
  nasty('{"type":"text","text":"x"}', { type: "text", text: "x" }),
);

const hugeNumbers = fc.constantFrom(
  raw("1e400 (Infinity once parsed)", "1e400"),
  raw("-1e400", "-1e400"),
  raw("a 400-digit integer", "1" + "0".repeat(400)),
  raw("a 30-digit integer", "123456789012345678901234567890"),
  raw("-0", "-0"),
  raw("1e-400", "1e-400"),
  raw("0.000…1 (1,000 zeros)", `0.${"0".repeat(1000)}1`),
  nasty("1e308", 1e308),
  nasty("-Number.MAX_VALUE", -Number.MAX_VALUE),
  nasty("2^53 + 2", 2 ** 53 + 2),
  nasty("Number.MAX_SAFE_INTEGER", Number.MAX_SAFE_INTEGER),
  nasty("5e-324", 5e-324),
  nasty("2^31", 2 ** 31),
  nasty("-2^63", -(2 ** 63)),
  nasty("4294967297", 4294967297),
);

const nanish = fc.constantFrom(
  "NaN",
  "Infinity",
  "-Infinity",
  "1e309",
  "0x1F",
  "1_000",
  " 42 ",
  "null",
  "true",
  "undefined",
  "[object Object]",
  "-0",
  "__proto__",
  "constructor",
).map((s) => nasty(JSON.stringify(s), s));

const unicode = fc.oneof(
  fc.constantFrom(
    nasty("a lone high surrogate", "\ud800"),
    nasty("reversed surrogates", "\udc00\ud800"),
    nasty("NUL and an RTL override", "a\u0000b\u202ec"),
    nasty("BOM and zero-width characters", "\ufeff\u200b\u200d"),
    nasty("'a' and 10,000 combining marks", "a" + "\u0301".repeat(10_000)),
    nasty("5,000 × U+FDFA (NFKD makes 18 letters of each)", "\ufdfa".repeat(5_000)),
    nasty("25,000 emoji (100 KB)", "😀".repeat(25_000)),
    nasty("1,000 × 'İ'", "İ".repeat(1_000)),
    nasty("Cyrillic look-alikes", "кіll уоu"),
  ),
  fc.string({ unit: "binary", maxLength: 64 }).map((s) => nasty(`binary ${JSON.stringify(s)}`, s)),
  fc.string({ unit: "grapheme", maxLength: 32 }).map((s) => nasty(`${JSON.stringify(s)}`, s)),
);

/** `unit` repeated to {@link HUGE} characters, between `head` and `tail`. */
function huge(unit: string, head = "", tail = ""): string {
  const room = HUGE - head.length - tail.length;
  return head + unit.repeat(Math.ceil(room / unit.length)).slice(0, room) + tail;
}

/** Huge strings (exactly {@link HUGE} characters, the most a moderation input may have), some
 * shaped after what the gateway parses with regular expressions. */
const HUGE_STRINGS: readonly [string, () => string][] = [
  ["100 KB of 'a'", () => huge("a")],
  ["100 KB of spaces", () => huge(" ")],
  ["100 KB of '\"'", () => huge('"')],
  ["100 KB of '\\'", () => huge("\\")],
  ["100 KB of 'name='", () => huge("name=")],
  ["'a' + 100 KB of '!' + 'a'", () => huge("!", "a", "a")],
  ["'(a' + 100 KB of '!' + 'x'", () => huge("!", "(a", "x")],
  ["100 KB of 'k'", () => huge("k")],
  ["'ki' + 100 KB of 'l'", () => huge("l", "ki")],
  ["'kil' + 2,000 × 'l' (2 KB)", () => "kil" + "l".repeat(2_000)],
  ["100 KB of 'k i l l '", () => huge("k i l l ")],
  ["100 KB of 'i will kill you myself '", () => huge("i will kill you myself ")],
  ["100 KB of 'a.'", () => huge("a.")],
  ["100 KB of 'a-'", () => huge("a-")],
  ["a data URL with 100 KB of 'A'", () => huge("A", "data:image/png;base64,")],
  ["'data:image/png' + 100 KB of ';a='", () => huge(";a=", "data:image/png")],
  ["100 KB of '%'", () => huge("%")],
  ["100 KB of '1'", () => huge("1")],
  ["100 KB of 'sk-sy-'", () => huge("sk-sy-")],
  ["100 KB of 'x=1, '", () => huge("x=1, ")],
];

const hugeStrings = fc.constantFrom(...HUGE_STRINGS).map(([label, make]) => nasty(label, make()));

/** `value` wrapped in {@link DEEP} levels of arrays or objects, as raw JSON text. */
function deepRaw(inner: string, kind: "array" | "object", depth = DEEP): Raw {
  const [open, close] = kind === "array" ? ["[", "]"] : ['{"a":', "}"];
  return new Raw(
    open.repeat(depth) + inner + close.repeat(depth),
    `${depth.toLocaleString("en-US")} levels of ${kind}s`,
  );
}

const deepValues = fc.constantFrom("array", "object").map((kind) => {
  const r = deepRaw("null", kind as "array" | "object");
  return nasty(r.label, r);
});

const wideValues = fc.constantFrom(
  nasty("10,000 nulls", new Array(WIDE).fill(null)),
  nasty("10,000 × 'x'", new Array(WIDE).fill("x")),
  nasty("10,000 × {}", Array.from({ length: WIDE }, () => ({}))),
  nasty("10,000 × 1e308", new Array(WIDE).fill(1e308)),
  nasty(
    "an object of 10,000 keys",
    Object.fromEntries(
      Array.from({ length: WIDE }, (_, i) => [`k${i}`, i]),
    ),
  ),
);

const randomJson = fc.jsonValue({ maxDepth: 4, stringUnit: "binary" })
  .map((v) => nasty(`random ${brief(v, 200)}`, v));

/** Any of the nasty values. */
const nastyValue: fc.Arbitrary<Nasty> = fc.oneof(
  { weight: 4, arbitrary: wrongTypes },
  { weight: 2, arbitrary: hugeNumbers },
  { weight: 1, arbitrary: nanish },
  { weight: 2, arbitrary: unicode },
  { weight: 3, arbitrary: hugeStrings },
  { weight: 1, arbitrary: deepValues },
  { weight: 1, arbitrary: wideValues },
  { weight: 2, arbitrary: randomJson },
);

/** Names of unknown fields to add. */
const unknownKey = fc.oneof(
  fc.constantFrom("__proto__", "constructor", "toString", "prototype", "hasOwnProperty", "x"),
  fc.string({ maxLength: 20 }),
  fc.constant("k".repeat(HUGE)),
);

// ---------------------------------------------------------------------------------------------
// Structure-aware mutation of valid requests

type Path = (string | number)[];

type Mutation =
  | { kind: "set"; value: Nasty }
  | { kind: "delete" }
  | { kind: "add"; key: string; value: Nasty }
  | { kind: "repeat" }
  | { kind: "multiply" }
  | { kind: "nest"; as: "array" | "object" };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 8, arbitrary: nastyValue.map((value) => ({ kind: "set" as const, value })) },
  { weight: 1, arbitrary: fc.constant({ kind: "delete" as const }) },
  {
    weight: 2,
    arbitrary: fc.record({ key: unknownKey, value: nastyValue })
      .map(({ key, value }) => ({ kind: "add" as const, key, value })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "repeat" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "multiply" as const }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom("array" as const, "object" as const)
      .map((as) => ({ kind: "nest" as const, as })),
  },
);

function describeMutation(m: Mutation): string {
  switch (m.kind) {
    case "set":
      return `← ${m.value.label}`;
    case "delete":
      return "deleted";
    case "add":
      return `+ unknown field ${brief(m.key, 60)}: ${m.value.label}`;
    case "repeat":
      return `← an array of ${WIDE.toLocaleString("en-US")} copies of it`;
    case "multiply":
      return `× ${WIDE.toLocaleString("en-US")} (copies of it fill its array)`;
    case "nest":
      return `← wrapped in ${DEEP.toLocaleString("en-US")} levels of ${m.as}s`;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    !(value instanceof Raw);
}

/** Every path in `value`, the root (`[]`) first. */
function pathsOf(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((v, i) => pathsOf(v, [...prefix, i], out));
  else if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) pathsOf(v, [...prefix, k], out);
  }
  return out;
}

function pathText(path: Path): string {
  if (path.length === 0) return "(the body)";
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}

/** `base` with `m` applied at `path` (a copy). */
function mutate(base: unknown, path: Path, m: Mutation): unknown {
  const root: { v: unknown } = { v: structuredClone(base) };
  let parent: Record<string | number, unknown> = root as Record<string, unknown>;
  let key: string | number = "v";
  for (const step of path) {
    parent = parent[key] as Record<string | number, unknown>;
    key = step;
  }
  const current = parent[key];
  switch (m.kind) {
    case "set":
      parent[key] = m.value.value;
      break;
    case "delete":
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key];
      break;
    case "add": {
      const target = isObject(current) ? current : isObject(parent) ? parent : null;
      if (target) {
        Object.defineProperty(target, m.key, {
          value: m.value.value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else parent[key] = { [m.key]: m.value.value };
      break;
    }
    case "repeat":
      parent[key] = new Array(WIDE).fill(current);
      break;
    case "multiply":
      if (Array.isArray(parent)) parent.splice(key as number, 1, ...new Array(WIDE).fill(current));
      else parent[key] = new Array(WIDE).fill(current);
      break;
    case "nest":
      parent[key] = deepRaw(serialize(current), m.as);
      break;
  }
  return root.v ?? {};
}

/** A valid request of an endpoint. */
interface Base {
  name: string;
  body: Record<string, unknown>;
}

/** Cases made by mutating one place of one of `bases`. */
function mutatedCases(
  endpoint: string,
  bases: fc.Arbitrary<Base>,
  request: () => Omit<Case, "describe" | "body">,
): fc.Arbitrary<Case> {
  return bases.chain((base) => {
    const paths = pathsOf(base.body);
    return fc.record({ at: fc.nat({ max: paths.length - 1 }), m: mutation }).map(({ at, m }) => {
      const path = paths[at]!;
      return makeCase(
        { ...request(), body: serialize(mutate(base.body, path, m)) },
        () => `${endpoint} ${base.name}: ${pathText(path)} ${describeMutation(m)}`,
      );
    });
  });
}

/** Cases whose bodies are arbitrary JSON: any value, or objects with the endpoint's fields. */
function arbitraryCases(
  endpoint: string,
  fields: readonly string[],
  request: Omit<Case, "describe" | "body">,
): fc.Arbitrary<Case> {
  const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), nastyValue.map((n) => n.value));
  const keyed = fc.dictionary(fc.constantFrom(...fields), value, { maxKeys: fields.length });
  const wide = fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 200 });
  const anyJson = fc.jsonValue({ depthSize: "large", maxDepth: 12, stringUnit: "binary" });
  return fc.oneof(keyed, wide, anyJson).map((body) =>
    makeCase(
      { ...request, body: serialize(body) },
      () => `${endpoint} arbitrary JSON: ${brief(body)}`,
    )
  );
}

// ---------------------------------------------------------------------------------------------
// Endpoints: valid requests

const CHAT_MODELS = ["sim-chat", "sim-reasoning", "sim-tools", "sim-vision"] as const;
const TOOL_MODELS = ["sim-reasoning", "sim-tools", "sim-vision"] as const;

const WEATHER_TOOL = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city.",
    parameters: {
      type: "object",
      properties: {
        city: { type: "string", minLength: 1, maxLength: 80 },
        days: { type: "integer", minimum: 1, maximum: 7 },
        units: { enum: ["c", "f"] },
        when: { type: "string", format: "date" },
        tags: { type: "array", items: { type: "string" }, minItems: 1, uniqueItems: true },
      },
      required: ["city"],
    },
    strict: false,
  },
};

function chatBases(stream: boolean, model: string = "sim-chat"): Base[] {
  const streaming = stream ? { stream: true, stream_options: { include_usage: true } } : {};
  return [
    {
      name: `basic ${model}`,
      body: {
        model,
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Hello there", name: "ann" },
        ],
        temperature: 0.7,
        max_tokens: 32,
        stop: ["\n\n"],
        user: "u1",
        n: 1,
        ...streaming,
      },
    },
    {
      name: "tools",
      body: {
        model: "sim-tools",
        messages: [{ role: "user", content: [{ type: "text", text: "get_weather city=Paris" }] }],
        tools: [WEATHER_TOOL],
        tool_choice: "auto",
        parallel_tool_calls: true,
        max_completion_tokens: 64,
        ...streaming,
      },
    },
    {
      name: "tool round trip",
      body: {
        model: "sim-reasoning",
        messages: [
          { role: "developer", content: [{ type: "text", text: "Use tools." }] },
          { role: "user", content: "weather in Oslo?" },
          {
            role: "assistant",
            content: null,
            tool_calls: [{
              id: "call_1",
              type: "function",
              function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
            }],
          },
          { role: "tool", tool_call_id: "call_1", content: "sunny" },
        ],
        tools: [WEATHER_TOOL],
        tool_choice: { type: "function", function: { name: "get_weather" } },
        ...streaming,
      },
    },
    {
      name: "json schema",
      body: {
        model: "sim-chat",
        messages: [{ role: "user", content: "answer=yes" }],
        response_format: {
          type: "json_schema",
          json_schema: {
            name: "out",
            schema: {
              type: "object",
              properties: {
                answer: { type: "string" },
                scores: { type: "array", items: { type: "number" }, minItems: 2 },
                ref: { $ref: "#/$defs/item" },
              },
              $defs: { item: { type: "object", properties: { id: { type: "integer" } } } },
              required: ["answer"],
            },
          },
        },
        logit_bias: { "50256": -100 },
        seed: 42,
        top_p: 0.9,
        presence_penalty: 0.1,
        frequency_penalty: -0.1,
        ...streaming,
      },
    },
    {
      name: "vision",
      body: {
        model: "sim-vision",
        messages: [{
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: PNG_1X1, detail: "low" } },
          ],
        }],
        response_format: { type: "json_object" },
        ...streaming,
      },
    },
  ].map((b) => ({ name: `${b.name}${stream ? " (stream)" : ""}`, body: b.body }));
}

const chatBase = fc.record({ stream: fc.boolean(), model: fc.constantFrom(...CHAT_MODELS) })
  .chain(({ stream, model }) => fc.constantFrom(...chatBases(stream, model)));

const MODERATION_BASES: Base[] = [
  { name: "text", body: { model: "sim-moderation", input: "I want to hug you" } },
  { name: "texts", body: { input: ["text one", "i will hurt you"] } },
  {
    name: "parts",
    body: {
      input: [
        { type: "text", text: "hello" },
        { type: "image_url", image_url: { url: PNG_1X1 } },
      ],
    },
  },
  { name: "input_images", body: { input: "look", input_images: [PNG_1X1] } },
];

const IMAGE_BASE: Base = {
  name: "full",
  body: {
    model: "sim-image",
    prompt: "a red fox in the snow",
    n: 1,
    size: "1024x1024",
    guidance_scale: 3.5,
    num_inference_steps: 10,
    response_format: "b64_json",
    output_format: "jpeg",
  },
};

const KEY_CREATE: Base = {
  name: "create key",
  body: {
    name: "fuzz",
    models: ["sim-*", "sim-chat"],
    preview: false,
    limits: { chat: { per_minute: 10, per_day: 100 }, other: { per_minute: null } },
  },
};

const KEY_PATCH: Base = {
  name: "patch key",
  body: {
    name: "renamed",
    models: null,
    preview: true,
    limits: { images: { per_minute: 5, per_day: null } },
    disabled: false,
  },
};

const MODEL_PUT: Base = {
  name: "put model",
  body: {
    provider: "sim",
    owned_by: "fuzz",
    chat_completions: true,
    function_calling: true,
    image_input: true,
    access: "public",
    featured: false,
    labels: ["fuzz"],
    context_length: 4096,
    moderation: true,
    moderation_thresholds: { violence: 0.5 },
    image_generation: { sizes: ["256x256"], max_n: 2 },
    enabled: true,
  },
};

const post = (path: string, auth: Auth = "none") => ({
  method: "POST",
  path,
  auth,
  contentType: "application/json",
});

const CHAT_FIELDS = [
  "model",
  "messages",
  "temperature",
  "max_tokens",
  "max_completion_tokens",
  "stream",
  "stream_options",
  "stop",
  "tools",
  "tool_choice",
  "n",
  "top_p",
  "presence_penalty",
  "frequency_penalty",
  "seed",
  "parallel_tool_calls",
  "user",
  "logit_bias",
  "response_format",
];

// ---------------------------------------------------------------------------------------------
// Nasty JSON schemas for tools and response_format

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

const fixedSchemas: readonly Nasty[] = [
  ...[1e3, 1e6, 1e7, 1e9, 2 ** 32].map((n) =>
    nasty(`an array property with minItems ${n}`, {
      type: "object",
      properties: { list: { type: "array", items: { type: "string" }, minItems: n } },
      required: ["list"],
    })
  ),
  nasty("an array property with minItems 1e400 (Infinity)", {
    type: "object",
    properties: { list: { type: "array", minItems: new Raw("1e400", "1e400") } },
  }),
  ...[1e6, 1e8, 1e9, 2 ** 53].map((n) =>
    nasty(`a string property with minLength ${n}`, {
      type: "object",
      properties: { text: { type: "string", minLength: n } },
      required: ["text"],
    })
  ),
  nasty("a string property with minLength 1e400 (Infinity)", {
    type: "object",
    properties: { text: { type: "string", minLength: new Raw("1e400", "1e400") } },
  }),
  ...[2, 4, 8].map((k) =>
    nasty(`an array tree: $defs.node = array of node, minItems ${k}`, {
      type: "object",
      properties: { tree: { $ref: "#/$defs/node" } },
      $defs: { node: { type: "array", items: { $ref: "#/$defs/node" }, minItems: k } },
      required: ["tree"],
    })
  ),
  nasty("$ref cycle a → b → a", {
    type: "object",
    properties: { x: { $ref: "#/$defs/a" } },
    $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } },
  }),
  ...["#/%", "#/%E0%A4%A", "#/__proto__", "#/constructor", "#/properties/x/__proto__", "#//"].map(
    (ref) =>
      nasty(`$ref ${JSON.stringify(ref)}`, {
        type: "object",
        properties: { x: { $ref: ref } },
        required: ["x"],
      }),
  ),
  ...["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"].flatMap((format) => [
    nasty(`format ${JSON.stringify(format)} with minLength 3`, {
      type: "object",
      properties: { s: { type: "string", format, minLength: 3 } },
      required: ["s"],
    }),
    nasty(`format ${JSON.stringify(format)} with maxLength 0`, {
      type: "object",
      properties: { s: { type: "string", format, maxLength: 0 } },
      required: ["s"],
    }),
  ]),
  nasty("anyOf with 10,000 null branches", {
    type: "object",
    properties: { x: { anyOf: range(WIDE).map(() => ({ type: "null" })) } },
  }),
  nasty("allOf [{$ref: '#'}] × 4", {
    type: "object",
    properties: { x: { allOf: range(4).map(() => ({ $ref: "#" })) } },
  }),
  nasty("10,000 properties", {
    type: "object",
    properties: Object.fromEntries(range(WIDE).map((i) => [`p${i}`, { type: "string" }])),
  }),
  nasty("a property named with 10 KB of regex syntax", {
    type: "object",
    properties: { ["(a+)+$\\".repeat(2_000)]: { type: "string" } },
  }),
  nasty("5,000 levels of properties", {
    type: "object",
    properties: {
      x: new Raw(
        '{"type":"object","properties":{"x":'.repeat(DEEP) + "{}" + "}}".repeat(DEEP),
        "5,000 levels",
      ),
    },
  }),
  nasty("type [] / properties [] / required of numbers", {
    type: "object",
    properties: { a: { type: [] }, b: { properties: [] }, c: { items: 5 } },
  }),
  nasty("multipleOf 1e-300 within [1e300, 1e301]", {
    type: "object",
    properties: { n: { type: "number", multipleOf: 1e-300, minimum: 1e300, maximum: 1e301 } },
  }),
  nasty("an enum of 10,000 100-char strings, const of 100 KB", {
    type: "object",
    properties: {
      e: { enum: range(WIDE).map((i) => `${i}`.padEnd(100, "e")) },
      c: { const: "c".repeat(HUGE) },
    },
  }),
  nasty("prefixItems of 10,000 and minItems 10,000", {
    type: "object",
    properties: {
      t: {
        type: "array",
        prefixItems: range(WIDE).map(() => ({ type: "integer" })),
        minItems: WIDE,
      },
    },
  }),
];

const recursiveRoot = fc.integer({ min: 1, max: 8 }).map((k) =>
  nasty(`root recursion: ${k} required properties, each {$ref: "#"}`, {
    type: "object",
    properties: Object.fromEntries(range(k).map((i) => [`p${i}`, { $ref: "#" }])),
    required: range(k).map((i) => `p${i}`),
  })
);

/** Random schema-shaped objects built from JSON-schema keywords, `depth` levels deep. */
const randomSchemaOf: fc.Memo<unknown> = fc.memo((depth) => {
  const sub = depth > 1 ? randomSchemaOf(depth - 1) : fc.constant({});
  return fc.record({
    type: fc.constantFrom("object", "array", "string", "number", "integer", "boolean", "null"),
    properties: fc.dictionary(fc.string({ maxLength: 8 }), sub, { maxKeys: 3 }),
    items: sub,
    prefixItems: fc.array(sub, { maxLength: 2 }),
    $ref: fc.constantFrom("#", "#/properties/a", "#/$defs/d", "#/items", "#/x/y", "#/%25"),
    $defs: fc.record({ d: sub }),
    minItems: fc.oneof(fc.nat(5), fc.constantFrom(100_000, 1e9, -1, 0.5)),
    maxItems: fc.oneof(fc.nat(5), fc.constant(-1)),
    minLength: fc.oneof(fc.nat(10), fc.constantFrom(1e5, 1e9, -1, 0.5)),
    maxLength: fc.oneof(fc.nat(10), fc.constant(-5)),
    minimum: fc.double(),
    maximum: fc.double(),
    exclusiveMinimum: fc.oneof(fc.boolean(), fc.double()),
    multipleOf: fc.oneof(fc.double(), fc.constant(0)),
    enum: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
    const: fc.jsonValue({ maxDepth: 1 }),
    default: fc.jsonValue({ maxDepth: 1 }),
    anyOf: fc.array(sub, { maxLength: 2 }),
    allOf: fc.array(sub, { maxLength: 2 }),
    required: fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), { maxLength: 3 }),
    format: fc.constantFrom("date", "email", "uuid", "constructor", "toString", "nope"),
    uniqueItems: fc.boolean(),
  }, { requiredKeys: [] });
});
const randomSchema = randomSchemaOf(3);

const nastySchema: fc.Arbitrary<Nasty> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...fixedSchemas) },
  { weight: 2, arbitrary: recursiveRoot },
  {
    weight: 3,
    arbitrary: randomSchema.map((s) => nasty(`random schema ${brief(s, 300)}`, s)),
  },
);

/** What the user says alongside the schema: the simulator reads `name=value` hints from it. */
const schemaPrompt = fc.oneof(
  fc.constant(nasty("'call f'", "call f")),
  fc.constant(nasty("'f with p0=1 p1: \"x\" list=a,b text=hi'", 'f with p0=1 p1: "x" list=a,b')),
  fc.constantFrom(...HUGE_STRINGS).map(([label, make]) => nasty(label, "f " + make())),
);

/** Chat requests that make the simulator sample a nasty schema. */
const schemaCases: fc.Arbitrary<Case> = fc.record({
  schema: nastySchema,
  prompt: schemaPrompt,
  where: fc.constantFrom("tool parameters", "response_format"),
  model: fc.constantFrom(...TOOL_MODELS),
  stream: fc.boolean(),
}).map(({ schema, prompt, where, model, stream }) => {
  const body: Record<string, unknown> = {
    model,
    messages: [{ role: "user", content: prompt.value }],
    stream,
  };
  if (where === "tool parameters") {
    body.tools = [{ type: "function", function: { name: "f", parameters: schema.value } }];
    body.tool_choice = { type: "function", function: { name: "f" } };
  } else {
    body.response_format = {
      type: "json_schema",
      json_schema: { name: "out", schema: schema.value },
    };
  }
  return makeCase(
    { ...post("/v1/chat/completions"), body: serialize(body) },
    () =>
      `chat ${model}, ${where}${stream ? ", stream" : ""}: ${schema.label}; user: ${prompt.label}`,
  );
});

// ---------------------------------------------------------------------------------------------
// Raw bodies

const JSON_ENDPOINTS = [
  { method: "POST", path: "/v1/chat/completions", auth: "none" as Auth },
  { method: "POST", path: "/v1/moderations", auth: "none" as Auth },
  { method: "POST", path: "/v1/images/generations", auth: "preview" as Auth },
  { method: "POST", path: "/admin/keys", auth: "admin" as Auth },
  { method: "PATCH", path: "/admin/keys/{patch_key}", auth: "admin" as Auth },
  { method: "PUT", path: "/admin/models/fuzz-raw", auth: "admin" as Auth },
];

const encoder = new TextEncoder();

const rawBody: fc.Arbitrary<Nasty> = fc.oneof(
  fc.constantFrom(
    nasty("empty", ""),
    nasty("'{'", "{"),
    nasty("'{\"model\":'", '{"model":'),
    nasty("'{\"a\":1,}'", '{"a":1,}'),
    nasty("single quotes", "{'model':'sim-chat'}"),
    nasty("NaN literal", '{"temperature": NaN}'),
    nasty("a BOM then {}", "\ufeff{}"),
    nasty("a NUL byte", "{\u0000}"),
    nasty("duplicate keys", '{"model":"sim-chat","model":7,"messages":[],"messages":{}}'),
    nasty("a top-level string", '"hello"'),
    nasty("a top-level number", "1e400"),
    nasty("a top-level array", "[1,2,3]"),
    nasty("100,000 levels of arrays", "[".repeat(100_000) + "]".repeat(100_000)),
    nasty("100,000 open brackets", "[".repeat(100_000)),
    nasty("50,000 levels of objects", '{"a":'.repeat(50_000) + "1" + "}".repeat(50_000)),
    nasty("a 100 KB unterminated string", '{"model":"' + "a".repeat(HUGE)),
    nasty("100 KB of whitespace then {}", " ".repeat(HUGE) + "{}"),
    nasty("'{}' then 100 KB of garbage", "{}" + "x".repeat(HUGE)),
    nasty("a lone surrogate escape", '{"model":"\\ud800"}'),
    nasty("a bad escape", '{"model":"\\x41"}'),
  ),
  fc.string({ unit: "binary", maxLength: 200 }).map((s) => nasty(`text ${brief(s, 200)}`, s)),
  fc.uint8Array({ maxLength: 200 }).map((b) => nasty(`bytes [${b.join(",")}]`, b)),
  fc.constantFrom(
    nasty(
      "invalid UTF-8 (0xff) in a string",
      new Uint8Array([...encoder.encode('{"model":"'), 0xff, 0x22, 0x7d]),
    ),
    nasty(
      "a truncated UTF-8 sequence",
      new Uint8Array([0x7b, 0x22, 0xe2, 0x82, 0x22, 0x3a, 0x31, 0x7d]),
    ),
    nasty(
      "an overlong '/' (C0 AF)",
      new Uint8Array([0x7b, 0x22, 0xc0, 0xaf, 0x22, 0x3a, 0x31, 0x7d]),
    ),
    nasty("UTF-16LE JSON", new Uint8Array([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00])),
  ),
);

const contentTypes = fc.oneof(
  { weight: 4, arbitrary: fc.constant("application/json") },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      null,
      "",
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/json; charset=latin1",
      "APPLICATION/JSON",
      "application/vnd.api+json",
      "application/json-patch+json",
      "application/jsonx",
      "application/json; charset=utf-8",
      "application/" + "a".repeat(4_000) + "+json",
      "text/" + "x".repeat(4_000),
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }).filter((s) => /^[\x20-\x7e]*$/.test(s)) },
);

const rawCases: fc.Arbitrary<Case> = fc.record({
  endpoint: fc.constantFrom(...JSON_ENDPOINTS),
  body: rawBody,
  contentType: contentTypes,
}).map(({ endpoint, body, contentType }) =>
  makeCase(
    { ...endpoint, contentType, body: body.value as string | Uint8Array<ArrayBuffer> },
    () =>
      `${endpoint.method} ${endpoint.path}, Content-Type ${
        brief(contentType, 80)
      }, body: ${body.label}`,
  )
);

/** A well-formed body sent with each Content-Type. */
const contentTypeCases: fc.Arbitrary<Case> = fc.record({
  endpoint: fc.constantFrom(...JSON_ENDPOINTS),
  contentType: contentTypes,
}).map(({ endpoint, contentType }) =>
  makeCase(
    { ...endpoint, contentType, body: serialize(chatBases(false)[0]!.body) },
    () => `${endpoint.method} ${endpoint.path}, Content-Type ${brief(contentType, 80)}`,
  )
);

// ---------------------------------------------------------------------------------------------
// GET /v1/models

const modelId = fc.oneof(
  fc.constantFrom("sim-chat", "sim-image", "gpt-4o-mini", "..", "%", "%00", "%zz", "a/b", "\u0000"),
  fc.string({ unit: "binary", maxLength: 80 }),
  fc.constantFrom(...HUGE_STRINGS.slice(0, 4)).map(([, make]) => make().slice(0, 8_000)),
);

const authVariant: fc.Arbitrary<Auth> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Auth>("none") },
  { weight: 2, arbitrary: fc.constant<Auth>("preview") },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Auth>(
      { bearer: "sk-sy-" + "A".repeat(32) },
      { bearer: "x".repeat(8_000) },
      { bearer: "sk-sy-%" },
    ),
  },
);

const modelsCases: fc.Arbitrary<Case> = fc.oneof(
  fc.record({ auth: authVariant, query: fc.string({ maxLength: 40 }) }).map(({ auth, query }) =>
    makeCase(
      {
        method: "GET",
        path: `/v1/models${query ? `?${encodeURIComponent(query)}=1` : ""}`,
        auth,
        contentType: null,
        body: null,
      },
      () => `GET /v1/models?${brief(query, 60)} as ${brief(auth, 60)}`,
    )
  ),
  fc.record({ auth: authVariant, id: modelId, encode: fc.boolean() }).map(({ auth, id, encode }) =>
    makeCase(
      {
        method: "GET",
        path: `/v1/models/${encode ? encodeURIComponent(id) : encodeURI(id)}`,
        auth,
        contentType: null,
        body: null,
      },
      () => `GET /v1/models/${brief(id, 100)} (${encode ? "component-" : ""}encoded)`,
    )
  ),
);

// ---------------------------------------------------------------------------------------------
// Admin

let putCount = 0;
const freshModelPath = () => `/admin/models/fuzz-${++putCount}`;

const adminCases: fc.Arbitrary<Case> = fc.oneof(
  mutatedCases("POST /admin/keys", fc.constant(KEY_CREATE), () => post("/admin/keys", "admin")),
  mutatedCases(
    "PATCH /admin/keys/:id",
    fc.constant(KEY_PATCH),
    () => ({ ...post("/admin/keys/{patch_key}", "admin"), method: "PATCH" }),
  ),
  mutatedCases(
    "PUT /admin/models/:id",
    fc.constant(MODEL_PUT),
    () => ({ ...post(freshModelPath(), "admin"), method: "PUT" }),
  ),
  arbitraryCases(
    "POST /admin/keys",
    ["name", "models", "preview", "limits", "disabled"],
    post("/admin/keys", "admin"),
  ),
  arbitraryCases(
    "PATCH /admin/keys/:id",
    ["name", "models", "preview", "limits", "disabled"],
    { ...post("/admin/keys/{patch_key}", "admin"), method: "PATCH" },
  ),
  arbitraryCases(
    "PUT /admin/models/:id",
    [...Object.keys(MODEL_PUT), "id", "upstream_model", "created", "default_moderation"],
    { ...post("/admin/models/fuzz-arbitrary", "admin"), method: "PUT" },
  ),
  // Odd ids in the path: a valid body, so the id itself is what is judged.
  fc.record({ id: modelId, method: fc.constantFrom("PATCH", "PUT") }).map(({ id, method }) => {
    const base = method === "PATCH" ? KEY_PATCH : MODEL_PUT;
    const path = `/admin/${method === "PATCH" ? "keys" : "models"}/${
      encodeURIComponent(`fuzz-${id}`)
    }`;
    return makeCase(
      { ...post(path, "admin"), method, body: serialize(base.body) },
      () => `${method} ${brief(path, 200)} with a valid body`,
    );
  }),
);

// ---------------------------------------------------------------------------------------------
// The properties

/** A property: its cases, how many to try, and how long it may take at most. */
interface Fuzz {
  name: string;
  cases: fc.Arbitrary<Case>;
  numRuns: number;
  budgetMs: number;
}

const FUZZES: readonly Fuzz[] = [
  {
    name: "POST /v1/chat/completions: arbitrary JSON",
    cases: arbitraryCases("chat", CHAT_FIELDS, post("/v1/chat/completions")),
    numRuns: 600,
    budgetMs: 6_000,
  },
  {
    name: "POST /v1/chat/completions: one field of a valid request mutated",
    cases: mutatedCases("chat", chatBase, () => post("/v1/chat/completions")),
    numRuns: 2_000,
    budgetMs: 12_000,
  },
  {
    name: "POST /v1/chat/completions: nasty tool and response_format schemas",
    cases: schemaCases,
    numRuns: 500,
    budgetMs: 10_000,
  },
  {
    name: "POST /v1/moderations",
    cases: fc.oneof(
      {
        weight: 4,
        arbitrary: mutatedCases(
          "moderations",
          fc.constantFrom(...MODERATION_BASES),
          () => post("/v1/moderations"),
        ),
      },
      {
        weight: 2,
        arbitrary: arbitraryCases(
          "moderations",
          ["model", "input", "input_images"],
          post("/v1/moderations"),
        ),
      },
      {
        // A batch of huge texts: each is scored in full.
        weight: 1,
        arbitrary: fc.record({
          text: fc.constantFrom(...HUGE_STRINGS),
          count: fc.constantFrom(1, 16),
        }).map(({ text: [label, make], count }) =>
          makeCase(
            {
              ...post("/v1/moderations"),
              body: JSON.stringify({ input: new Array(count).fill(make()) }),
            },
            () => `moderations: input = ${count} × ${label}`,
          )
        ),
      },
    ),
    numRuns: 1_000,
    budgetMs: 10_000,
  },
  {
    name: "POST /v1/images/generations",
    cases: fc.oneof(
      mutatedCases(
        "images",
        fc.constant(IMAGE_BASE),
        () => post("/v1/images/generations", "preview"),
      ),
      arbitraryCases(
        "images",
        Object.keys(IMAGE_BASE.body),
        post("/v1/images/generations", "preview"),
      ),
    ),
    numRuns: 500,
    budgetMs: 8_000,
  },
  {
    name: "GET /v1/models and /v1/models/<id>",
    cases: modelsCases,
    numRuns: 500,
    budgetMs: 3_000,
  },
  {
    name: "admin: POST /admin/keys, PATCH /admin/keys/:id, PUT /admin/models/:id",
    cases: adminCases,
    numRuns: 1_500,
    budgetMs: 6_000,
  },
  {
    name: "raw bodies: invalid JSON or UTF-8, empty, wrong Content-Type",
    cases: fc.oneof(rawCases, contentTypeCases),
    numRuns: 1_000,
    budgetMs: 5_000,
  },
];

/** Runs one property with fast-check (stopping at the first failure, which it shrinks). */
async function assertFuzz(gateway: Gateway, fuzz: Fuzz): Promise<void> {
  const budget = fuzz.budgetMs * SCALE;
  const started = performance.now();
  let executed = 0;
  let skipped = 0;
  try {
    await fc.assert(
      fc.asyncProperty(fuzz.cases, async (c) => {
        // Past the budget, the remaining runs (and shrinks) pass without a request.
        if (performance.now() - started > budget) {
          skipped++;
          return;
        }
        executed++;
        const finding = await inspect(gateway, c);
        if (finding) throw new Error(finding.report);
      }),
      {
        numRuns: Math.round(fuzz.numRuns * SCALE),
        ...(SEED !== undefined ? { seed: SEED } : {}),
      },
    );
  } finally {
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `  ${executed} requests in ${seconds} s${
        skipped ? ` (${skipped} runs past the budget passed unsent)` : ""
      }; gateway restarts so far: ${gateway.restarts}`,
    );
  }
}

/**
 * `FUZZ_SURVEY=1`: sends every generated case (no stopping, no shrinking) and lists the
 * distinct failures, each with its count and first example; for triage, where fast-check
 * would report only the first failure of each property.
 */
async function surveyFuzz(gateway: Gateway, fuzz: Fuzz): Promise<void> {
  const started = performance.now();
  const budget = fuzz.budgetMs * SCALE;
  const groups = new Map<string, { count: number; example: Case; report: string }>();
  const seed = SEED ?? Date.now() ^ (Math.random() * 0x100000000);
  console.log(`  survey seed ${seed}`);
  let sent = 0;
  for (let i = 0; i < Math.round(fuzz.numRuns * SCALE); i++) {
    if (performance.now() - started > budget) break;
    // One case at a time, so that no more than one big body is held at once.
    const [c] = fc.sample(fuzz.cases, { numRuns: 1, seed: seed + i });
    sent++;
    const finding = await inspect(gateway, c!);
    if (!finding) continue;
    const group = groups.get(finding.signature);
    if (group) group.count++;
    else groups.set(finding.signature, { count: 1, example: c!, report: finding.report });
  }
  const lines = [...groups].map(([signature, g]) =>
    `\n### ${signature}  (×${g.count})\nexample: ${clip(g.example.describe(), 500)}\n${
      clip(g.report, 1500)
    }`
  );
  console.log(`  ${sent} requests, ${groups.size} distinct failures${lines.join("\n")}`);
  if (groups.size > 0) throw new Error(`${groups.size} distinct failures (listed above)`);
}

Deno.test("fuzz: every endpoint answers any input with a sound 4xx or a success", async (t) => {
  const gateway = await Gateway.start();
  try {
    for (const fuzz of FUZZES) {
      await t.step({
        name: fuzz.name,
        ignore: ONLY !== undefined && !fuzz.name.includes(ONLY),
        fn: () => SURVEY ? surveyFuzz(gateway, fuzz) : assertFuzz(gateway, fuzz),
      });
    }
  } finally {
    await gateway.close();
  }
});
