import type { Clock } from "../clock.ts";
import { boundRecord, type LogRecord } from "./record.ts";

const encoder = new TextEncoder();

/** Where the logger writes: stdout for request lines, stderr for diagnostics. */
export interface LogOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** The process's real stdout and stderr. */
export const processOutput: LogOutput = {
  stdout: (text) => writeAll(Deno.stdout, text),
  stderr: (text) => writeAll(Deno.stderr, text),
};

function writeAll(file: { writeSync(p: Uint8Array): number }, text: string): void {
  let bytes = encoder.encode(text);
  while (bytes.length > 0) bytes = bytes.subarray(file.writeSync(bytes));
}

/** Where request records go besides stdout (the KV store of {@link KvLogSink}). */
export interface LogSink {
  /** Takes a record and its JSON text (the stdout line, without the newline). */
  add(record: LogRecord, json: string): void;
  flush(): Promise<void>;
  /** Records taken but not stored (over a budget, or lost with a failed write). */
  readonly dropped: number;
}

/** Options for {@link Logger}. */
export interface LoggerOptions {
  output?: LogOutput;
  sinks?: LogSink[];
  clock: Clock;
  /** Milliseconds between stdout flushes; request lines are batched off the request path. */
  flushMs?: number;
}

/** The request log and diagnostics: JSON lines, batched, never blocking a request. */
export class Logger {
  readonly #output: LogOutput;
  readonly #sinks: LogSink[];
  readonly #clock: Clock;
  readonly #flushMs: number;
  #pending = "";
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The ISO 8601 text of the second `#second` (ms since the epoch / 1000), up to the dot. */
  #second = NaN;
  #secondText = "";

  constructor(options: LoggerOptions) {
    this.#output = options.output ?? processOutput;
    this.#sinks = options.sinks ?? [];
    this.#clock = options.clock;
    this.#flushMs = options.flushMs ?? 20;
  }

  /** Adds a sink (used once the KV sink exists). */
  addSink(sink: LogSink): void {
    this.#sinks.push(sink);
  }

  /** The ISO 8601 time of `ms` (as `Date.toISOString` writes it), for records: the text of
   * the current second is kept, so most calls only append the milliseconds. */
  timestamp(ms: number): string {
    if (!Number.isInteger(ms) || ms < 0) return new Date(ms).toISOString();
    const second = Math.floor(ms / 1000);
    if (second !== this.#second) {
      const text = new Date(second * 1000).toISOString();
      if (text.length !== 24) return new Date(ms).toISOString(); // a year beyond 9999
      this.#second = second;
      this.#secondText = text.slice(0, 20);
    }
    const millis = ms - second * 1000;
    return `${this.#secondText}${millis < 10 ? "00" : millis < 100 ? "0" : ""}${millis}Z`;
  }

  /** Records not stored by the sinks (the KV log's budget spent, or a failed write), since
   * start; every request record is on stdout regardless. */
  get recordsNotStored(): number {
    return this.#sinks.reduce((n, sink) => n + sink.dropped, 0);
  }

  /** Records one finished request, its text fields cut to their bounds (see `boundRecord`). */
  request(input: LogRecord): void {
    const record = boundRecord(input);
    const json = JSON.stringify(record);
    this.#pending += json + "\n";
    for (const sink of this.#sinks) sink.add(record, json);
    if (this.#pending.length > 64 * 1024) this.#flushStdout();
    else if (this.#timer === undefined) {
      this.#timer = setTimeout(() => this.#flushStdout(), this.#flushMs);
    }
  }

  /** A one-line warning on stderr (configuration and start-up notices). */
  warn(message: string): void {
    this.#diagnostic("warn", message);
  }

  /** A one-line notice on stderr. */
  info(message: string): void {
    this.#diagnostic("info", message);
  }

  /** An internal error with its stack, on stderr only. */
  error(message: string, error: unknown, requestId?: string): void {
    const detail = error instanceof Error
      ? (error.stack ?? `${error.name}: ${error.message}`)
      : String(error);
    this.#diagnostic("error", message, { request_id: requestId, error: detail });
  }

  /** Writes everything pending to stdout and every sink. */
  async flush(): Promise<void> {
    this.#flushStdout();
    await Promise.all(this.#sinks.map((sink) => sink.flush()));
  }

  #diagnostic(level: string, message: string, extra: Record<string, unknown> = {}): void {
    const line = JSON.stringify({
      ts: this.timestamp(this.#clock.now()),
      level,
      message,
      ...extra,
    });
    this.#output.stderr(line + "\n");
  }

  #flushStdout(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#pending === "") return;
    const text = this.#pending;
    this.#pending = "";
    try {
      this.#output.stdout(text);
    } catch {
      // stdout closed (a detached process): the KV copy still has the records.
    }
  }
}
