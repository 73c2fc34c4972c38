/**
 * The HTTP side of the fake upstreams (`Deno.serve` on port 0): records what arrives, notices
 * when a caller goes away, and can be told to fail. The wire formats live in
 * `fake_openai.ts` and `fake_anthropic.ts`.
 */
import { defaultScript, type Script } from "./fake_model.ts";

/** One way to misbehave, for one request. */
export interface Fault {
  /** Answer with this status and the style's error body (`type`/`message` below). */
  status?: number;
  errorType?: string;
  errorCode?: string;
  message?: string;
  /** Extra response headers (`retry-after`, …). */
  headers?: Record<string, string>;
  /** Wait this long before answering (given up when the caller leaves). Deno.serve does not
   * always notice a caller leaving while nothing is written (it does for small request bodies):
   * then `gone` resolves when the delay ends and the answer cannot be written. */
  delayMs?: number;
  /** With `status`: the error message quotes the request's messages (or input), as a
   * validation error of some servers does: `… (input_value='[{"role":"user",…}]')`. */
  quotePrompt?: boolean;
  /** With `status`: the error message is padded with this many bytes (an oversized body). */
  errorPadBytes?: number;
  /** Answer 200 with this raw body instead of the real answer. */
  garbage?: string;
  /** A JSON answer: the real one followed by whitespace up to this many bytes, written in
   * pieces without a content-length (so only counting what arrives can stop it). */
  oversizedBytes?: number;
  /** Stream: wait this long before writing each event. */
  paceMs?: number;
  /** Stream: after this many events, break the connection (no clean end). */
  breakAfterEvents?: number;
  /** Stream: after this many events, stop writing (until the caller leaves). */
  stallAfterEvents?: number;
  /** Stream: after this many events, send the style's mid-stream error event and end. */
  errorAfterEvents?: number;
  /** Stream: after this many events, end the body cleanly (a truncated stream). */
  endAfterEvents?: number;
  /** Stream: after this many events, a `data:` line that never ends: `longLineBytes` of it
   * are written (unless the caller leaves first), then the body ends mid-line. */
  longLineAfterEvents?: number;
  /** The length of that line; default 256 MiB. */
  longLineBytes?: number;
}

/** One request the fake received. */
export interface Received {
  method: string;
  path: string;
  headers: Headers;
  /** The parsed JSON body (or the raw text when it was not JSON). */
  body: unknown;
  /** The body as it came. */
  text: string;
  /** Violations of the documented format found in it (empty when it was right). */
  violations: string[];
  /** Resolves with how the caller went away, if it did before the answer ended. */
  gone: Promise<string>;
  /** Whether the caller went away before the answer ended. */
  wentAway: boolean;
}

/** A style's answer to a valid request. */
export type Answer =
  | { kind: "json"; status: number; body: unknown }
  | { kind: "stream"; events: string[] };

/** One more endpoint of a style, besides its chat path. */
export interface FakeRoute {
  /** Its HTTP method (default `POST`). */
  method?: "GET" | "POST";
  /** Checks headers and body (and the URL's query) against the documented format; returns
   * the violations. */
  check(headers: Headers, body: unknown, url: URL): string[];
  /** Renders a valid request's answer. */
  answer(body: Record<string, unknown>, url: URL): Answer | Promise<Answer>;
}

/** What a style (OpenAI or Anthropic) plugs into the server. */
export interface FakeStyle {
  /** The path it serves, e.g. `/v1/chat/completions`. */
  path: string;
  /** Checks headers and body against the documented format; returns the violations. */
  check(headers: Headers, body: unknown): string[];
  /** Renders a valid request's answer. */
  answer(body: Record<string, unknown>, script: Script): Answer;
  /** Other endpoints by path (e.g. `/v1/moderations`); faults apply to them too. */
  routes?: Record<string, FakeRoute>;
  /** Endpoints whose path holds a parameter (Gemini's `/v1beta/models/{model}:method`), by
   * the request's URL; faults apply to them too. */
  match?(url: URL): FakeRoute | undefined;
  /** The answer to a request with the wrong key (default: a 401 `authentication_error`). */
  authError?(): { status: number; body: unknown };
  /** The style's error body. */
  errorBody(status: number, type: string, message: string, code?: string): unknown;
  /** The style's mid-stream error event (SSE text). */
  streamError(type: string, message: string): string;
}

/** Options of a fake upstream. */
export interface FakeOptions {
  /** The API key it expects. */
  apiKey?: string;
  /** Write streams in slices of this many bytes (splitting lines, events, characters). */
  sliceBytes?: number;
  /** Serve HTTPS with this certificate and key (PEM); its `url` is then `https://`. */
  tls?: { cert: string; key: string };
}

const encoder = new TextEncoder();

/** The API key fakes expect unless told otherwise. */
export const FAKE_API_KEY = "sk-fake-upstream-key-0123456789";

/** A running fake upstream. */
export class FakeUpstream {
  readonly url: string;
  readonly apiKey: string;
  readonly received: Received[] = [];
  /** Faults for the next requests, in order; requests beyond them are answered normally. */
  faults: Fault[] = [];
  /** What the model answers. */
  script: Script = defaultScript;
  /** The models its model list names, as the upstream writes them (fake_model_lists.ts). */
  listing: Record<string, unknown>[] = [];
  /** The most models one page of that list gives, whatever was asked for. */
  listPageMax = 1000;
  sliceBytes: number | null;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #style: FakeStyle;
  /** Ends the delays and stalls still waiting (on close). */
  readonly #wakers = new Set<() => void>();

  constructor(style: FakeStyle, options: FakeOptions = {}) {
    this.#style = style;
    this.apiKey = options.apiKey ?? FAKE_API_KEY;
    this.sliceBytes = options.sliceBytes ?? null;
    this.#server = Deno.serve(
      { port: 0, hostname: "127.0.0.1", onListen: () => {}, ...options.tls },
      (request) => this.#handle(request),
    );
    this.url = `${options.tls ? "https" : "http"}://127.0.0.1:${this.#server.addr.port}`;
  }

  /** The last request received. */
  get last(): Received {
    const last = this.received.at(-1);
    if (!last) throw new Error("the fake upstream received no request");
    return last;
  }

  /** Every violation found in every request so far. */
  get violations(): string[] {
    return this.received.flatMap((r) => r.violations);
  }

  async close(): Promise<void> {
    // Waiting handlers must finish, or the shutdown would wait for them.
    for (const wake of this.#wakers) wake();
    await this.#server.shutdown();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const text = await request.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // recorded as text; the style's check reports it
    }
    let markGone: (how: string) => void = () => {};
    const received: Received = {
      method: request.method,
      path: url.pathname,
      headers: request.headers,
      body,
      text,
      violations: [],
      gone: new Promise((resolve) => markGone = resolve),
      wentAway: false,
    };
    const gone = (how: string) => {
      if (received.wentAway) return;
      received.wentAway = true;
      markGone(how);
    };
    request.signal.addEventListener("abort", () => gone("request signal"), { once: true });
    this.received.push(received);

    const style = this.#style;
    const route: FakeRoute | undefined = url.pathname === style.path
      ? { check: style.check, answer: (b) => style.answer(b, this.script) }
      : style.routes?.[url.pathname] ?? style.match?.(url);
    if (!route || request.method !== (route.method ?? "POST")) {
      received.violations.push(`unexpected ${request.method} ${url.pathname}`);
      return json(404, style.errorBody(404, "not_found_error", `No route ${url.pathname}`));
    }
    received.violations.push(...route.check(request.headers, body, url));
    const fault = this.faults.shift() ?? {};
    if (fault.delayMs) await this.#sleep(fault.delayMs, request.signal);
    if (request.signal.aborted) return new Response(null, { status: 499 });
    if (fault.status) {
      const type = fault.errorType ?? "api_error";
      let message = fault.message ?? `fault ${fault.status}`;
      if (fault.quotePrompt) message += ` (input_value='${JSON.stringify(promptOf(body))}')`;
      if (fault.errorPadBytes) message += " ".repeat(fault.errorPadBytes);
      return json(
        fault.status,
        style.errorBody(fault.status, type, message, fault.errorCode),
        fault.headers,
      );
    }
    if (received.violations.length > 0) {
      if (received.violations.some((v) => v.startsWith("auth:"))) {
        const auth = style.authError?.() ??
          { status: 401, body: style.errorBody(401, "authentication_error", "invalid x-api-key") };
        return json(auth.status, auth.body);
      }
      return json(
        400,
        style.errorBody(400, "invalid_request_error", received.violations.join("; ")),
      );
    }
    if (fault.garbage !== undefined) {
      return new Response(fault.garbage, {
        headers: { "content-type": "application/json", ...fault.headers },
      });
    }
    const answer = await route.answer(body as Record<string, unknown>, url);
    if (answer.kind === "json" && fault.oversizedBytes !== undefined) {
      return oversized(answer.body, fault.oversizedBytes, gone);
    }
    if (answer.kind === "json") return json(answer.status, answer.body, fault.headers);
    return this.#stream(answer.events, fault, gone, request.signal);
  }

  #stream(
    events: string[],
    fault: Fault,
    gone: (how: string) => void,
    signal: AbortSignal,
  ): Response {
    let limit = events.length;
    let ending = "end" as "end" | "break" | "stall" | "error" | "line";
    for (
      const [n, kind] of [
        [fault.breakAfterEvents, "break"],
        [fault.stallAfterEvents, "stall"],
        [fault.errorAfterEvents, "error"],
        [fault.endAfterEvents, "end"],
        [fault.longLineAfterEvents, "line"],
      ] as const
    ) {
      if (n !== undefined) {
        limit = Math.min(n, events.length);
        ending = kind;
      }
    }
    const sent = events.slice(0, limit);
    if (ending === "error") sent.push(this.#style.streamError("overloaded_error", "Overloaded"));
    const pieces = this.#pieces(sent, fault.paceMs !== undefined);
    let lineLeft = 0;
    if (ending === "line") {
      pieces.push(encoder.encode("data: "));
      lineLeft = fault.longLineBytes ?? 256 * 1024 * 1024;
    }
    let at = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        if (at < pieces.length) {
          if (fault.paceMs !== undefined) await this.#sleep(fault.paceMs, signal);
          // A pause between slices, so they reach the reader as separate reads.
          else if (at > 0 && this.sliceBytes !== null) await Promise.resolve();
          controller.enqueue(pieces[at++]!);
          return;
        }
        if (lineLeft > 0) {
          const bytes = new Uint8Array(Math.min(lineLeft, 64 * 1024)).fill(0x78); // "x"
          lineLeft -= bytes.length;
          return controller.enqueue(bytes);
        }
        if (ending === "break") {
          // Deno.serve logs this error to stderr; it is the injected fault, not a failure.
          return controller.error(new Error("connection broken (a fault the test asked for)"));
        }
        if (ending === "stall") await this.#sleep(60_000, signal);
        if (!signal.aborted) controller.close();
      },
      cancel: () => gone("stream cancelled"),
    });
    return new Response(stream, {
      headers: { "content-type": "text/event-stream; charset=utf-8", ...fault.headers },
    });
  }

  /** The bytes of `events`: one piece per event when paced, else `sliceBytes` slices. */
  #pieces(events: string[], paced: boolean): Uint8Array[] {
    if (paced) return events.map((e) => encoder.encode(e));
    const bytes = encoder.encode(events.join(""));
    const slice = this.sliceBytes ?? bytes.length;
    const pieces: Uint8Array[] = [];
    for (let at = 0; at < bytes.length; at += slice) pieces.push(bytes.subarray(at, at + slice));
    return pieces;
  }

  #sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        this.#wakers.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wakers.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }
}

/** What a request asked about, for an error message to quote: its messages or input. */
function promptOf(body: unknown): unknown {
  if (typeof body !== "object" || body === null) return body;
  const fields = body as Record<string, unknown>;
  return fields.messages ?? fields.input ?? fields.prompt ?? fields.contents;
}

/** A 200 with `body` as JSON and whitespace after it up to `bytes`, in 64 KiB pieces. */
function oversized(body: unknown, bytes: number, gone: (how: string) => void): Response {
  const head = encoder.encode(JSON.stringify(body));
  const space = new Uint8Array(64 * 1024).fill(0x20);
  let left = bytes - head.length;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(head);
    },
    pull(controller) {
      if (left <= 0) return controller.close();
      const piece = space.slice(0, Math.min(left, space.length));
      left -= piece.length;
      controller.enqueue(piece);
    },
    cancel: () => gone("stream cancelled"),
  });
  return new Response(stream, { headers: { "content-type": "application/json" } });
}

function json(status: number, body: unknown, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}
