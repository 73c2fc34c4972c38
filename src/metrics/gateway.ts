/**
 * The gateway's metrics (`GET /metrics`): what settled requests add up to, updated once per
 * request by a settle hook, and what is read at scrape time (open requests and streams, memory).
 * Every label takes a bounded set of values: route templates, status classes, catalogue model
 * ids (a model is named only once it resolved), provider ids, error codes, limit scopes.
 */
import { Counter, Gauge, Histogram, type Instrument, renderAll } from "./instruments.ts";

/** Seconds: from a millisecond to two minutes. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Seconds: from a tenth of a millisecond to a second. */
const KV_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/** One settled request, as the metrics see it. */
export interface RequestSample {
  /** The route's path template (`/v1/models/:id`), `preflight` or `unmatched`. */
  route: string;
  method: string;
  status: number;
  /** The resolved model, or `""`. */
  model: string;
  /** The resolved model's provider, or `null`. */
  provider: string | null;
  /** The error code answered, or `null`. */
  error: string | null;
  /** The rate-limit scope of the route, or `null`. */
  scope: string | null;
  /** Whether a streamed answer began (its first bytes were ready). */
  streamBegan: boolean;
  /** Seconds from arrival to the end. */
  seconds: number;
  /** Seconds from arrival to the response (a stream's first bytes), or `null`. */
  firstByteSeconds: number | null;
  inputTokens: number;
  outputTokens: number;
  /** Routes of a several-route model that failed and were moved past, by provider and error
   * code. */
  fallbacks: readonly { provider: string; kind: string }[];
  /** The verdicts of the model's guardrails (names from the config: a bounded set). */
  guardrails?: readonly { name: string; stage: string; verdict: string }[] | null;
  /** What the response cache did (`hit`, `miss`, `bypass`), for a model with one; else `null`. */
  cache?: string | null;
}

/** What is read at scrape time. */
export interface MetricsSources {
  /** Requests not yet settled, and how many of them are streams that began. */
  open(): { requests: number; streams: number };
  /** Request records not stored in KV since start. */
  recordsNotStored(): number;
  /** The process's memory (`Deno.memoryUsage`). */
  memory(): Deno.MemoryUsage;
  /** Batch lines queued and not yet done, in every running batch (as last read from KV). */
  batchQueueDepth?(): number;
}

/** Statuses of a request answered with its upstream's failure (once a provider resolved). */
const UPSTREAM_STATUSES = new Set([429, 500, 502, 503, 504]);

/** The instruments, their updates and the exposition. */
export class GatewayMetrics {
  readonly #requests = new Counter(
    "switchyard_http_requests_total",
    "HTTP requests settled, by route template, method, status class and model.",
    ["route", "method", "status_class", "model"],
  );
  readonly #duration = new Histogram(
    "switchyard_http_request_duration_seconds",
    "Seconds from a request's arrival to its end (a stream's last byte).",
    ["route"],
    LATENCY_BUCKETS,
  );
  readonly #firstByte = new Histogram(
    "switchyard_http_time_to_first_byte_seconds",
    "Seconds from a request's arrival until its response was ready (a stream's first bytes).",
    ["route"],
    LATENCY_BUCKETS,
  );
  readonly #firstToken = new Histogram(
    "switchyard_time_to_first_token_seconds",
    "Seconds from a streamed model call's arrival to its first rendered event.",
    ["model"],
    LATENCY_BUCKETS,
  );
  readonly #tokens = new Counter(
    "switchyard_tokens_total",
    "Tokens by model and type (input, output), as the back end reported them or estimated.",
    ["model", "type"],
  );
  readonly #upstreamErrors = new Counter(
    "switchyard_upstream_errors_total",
    "Requests answered with an upstream's failure, by provider and error code.",
    ["provider", "kind"],
  );
  readonly #fallbacks = new Counter(
    "switchyard_route_fallbacks_total",
    "Route attempts that failed and were moved past (the next route tried, or a cut stream " +
      "continued on another), by model, the failed route's provider and error code.",
    ["model", "provider", "kind"],
  );
  readonly #refusals = new Counter(
    "switchyard_rate_limit_refusals_total",
    "Requests refused by the gateway's rate limits, by scope.",
    ["scope"],
  );
  readonly #guardrails = new Counter(
    "switchyard_guardrail_verdicts_total",
    "Guardrail verdicts on chat calls (passed, logged, redacted, blocked, failed_open, " +
      "failed_closed), by model, guardrail name and stage.",
    ["model", "guardrail", "stage", "verdict"],
  );
  readonly #cache = new Counter(
    "switchyard_cache_requests_total",
    "Chat calls of models with a response cache, by model and result (hit, miss, bypass).",
    ["model", "result"],
  );
  readonly #kvCommit = new Histogram(
    "switchyard_kv_commit_duration_seconds",
    "Seconds a KV atomic commit took, by the store that made it (ratelimit, log).",
    ["store"],
    KV_BUCKETS,
  );
  readonly #batchLines = new Counter(
    "switchyard_batch_lines_total",
    "Batch lines whose result this process wrote, by result (completed, failed).",
    ["result"],
  );
  readonly #instruments: readonly Instrument[];

  constructor(sources: MetricsSources) {
    const one = (read: () => number) => () => [[[], read()] as const];
    this.#instruments = [
      this.#requests,
      this.#duration,
      this.#firstByte,
      this.#firstToken,
      this.#tokens,
      this.#upstreamErrors,
      this.#fallbacks,
      this.#refusals,
      this.#guardrails,
      this.#cache,
      this.#kvCommit,
      this.#batchLines,
      new Gauge(
        "switchyard_batch_queue_depth",
        "Batch lines queued and not yet done, in every running batch on the KV store.",
        [],
        one(() => sources.batchQueueDepth?.() ?? 0),
      ),
      new Gauge(
        "switchyard_requests_in_flight",
        "Requests not yet settled.",
        [],
        one(() => sources.open().requests),
      ),
      new Gauge(
        "switchyard_active_streams",
        "Streamed answers that began and have not ended.",
        [],
        one(() => sources.open().streams),
      ),
      new Gauge(
        "switchyard_log_records_not_stored",
        "Request records not stored in KV since start (over the budget, or a failed write).",
        [],
        one(sources.recordsNotStored),
      ),
      new Gauge(
        "process_resident_memory_bytes",
        "Resident set size in bytes.",
        [],
        one(() => sources.memory().rss),
      ),
      new Gauge(
        "deno_memory_heap_bytes",
        "V8 heap bytes, used and total, and memory of objects outside it (external).",
        ["kind"],
        () => {
          const memory = sources.memory();
          return [
            [["used"], memory.heapUsed],
            [["total"], memory.heapTotal],
            [["external"], memory.external],
          ] as const;
        },
      ),
    ];
  }

  /** Counts one settled request. */
  request(sample: RequestSample): void {
    const { route, model } = sample;
    this.#requests.inc([route, sample.method, statusClass(sample.status), model]);
    this.#duration.observe([route], sample.seconds);
    if (sample.firstByteSeconds !== null) {
      this.#firstByte.observe([route], sample.firstByteSeconds);
      if (sample.streamBegan) this.#firstToken.observe([model], sample.firstByteSeconds);
    }
    if (sample.inputTokens > 0) this.#tokens.inc([model, "input"], sample.inputTokens);
    if (sample.outputTokens > 0) this.#tokens.inc([model, "output"], sample.outputTokens);
    for (const { provider, kind } of sample.fallbacks) this.#fallbacks.inc([model, provider, kind]);
    for (const g of sample.guardrails ?? []) {
      this.#guardrails.inc([model, g.name, g.stage, g.verdict]);
    }
    if (sample.cache) this.#cache.inc([model, sample.cache]);
    if (sample.error === null) return;
    if (sample.provider !== null && UPSTREAM_STATUSES.has(sample.status)) {
      this.#upstreamErrors.inc([sample.provider, sample.error]);
    } else if (
      sample.status === 429 && sample.provider === null && sample.scope !== null
    ) {
      this.#refusals.inc([sample.scope]);
    }
  }

  /** Counts one batch line whose result was written. */
  batchLine(ok: boolean): void {
    this.#batchLines.inc([ok ? "completed" : "failed"]);
  }

  /** Counts one KV commit of `store` that took `seconds`. */
  kvCommit(store: string, seconds: number): void {
    this.#kvCommit.observe([store], seconds);
  }

  /** The exposition (text format 0.0.4). */
  render(): string {
    return renderAll(this.#instruments);
  }
}

/** `2xx`, `4xx`, ... */
function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}
