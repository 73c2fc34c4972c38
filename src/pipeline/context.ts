/**
 * One request on its way through the pipeline (DESIGN §3): the request's data, read-only, and
 * the state the steps fill in as it goes, each field typed and owned by one step.
 */
import { followingAbort } from "../abort.ts";
import { ANONYMOUS_CALLER, type Caller } from "../auth/authenticate.ts";
import type { KeyStore } from "../auth/keys.ts";
import { ANONYMOUS, type Principal } from "../auth/principal.ts";
import type { Usage } from "../canonical/result.ts";
import type { Catalogue } from "../catalogue/store.ts";
import type { Clock } from "../clock.ts";
import type { Config, LimitScope } from "../config/types.ts";
import type { ApiError, ErrorStyle } from "../errors.ts";
import type { Expiries } from "../http/expiries.ts";
import type { KvHealth } from "../kv/health.ts";
import { requestUrl, targetUrl } from "../http/request_url.ts";
import type { Lease } from "../limits/leases.ts";
import type { WindowState } from "../limits/windows.ts";
import type { Logger } from "../log/logger.ts";
import type { ProviderLookup } from "../providers/types.ts";
import type { RouteHealth } from "../routing/health.ts";
import type { ListEntry } from "../entry_list.ts";
import type { GuardrailVerdict } from "../guardrails/report.ts";
import type { StreamTally } from "../http/sse_response.ts";
import type { Held } from "./held.ts";
import type { ModelStep } from "./model_step.ts";
import type { BatchRunner } from "../batches/runner.ts";

/** Everything a step or handler may use, built once per app. */
export interface Services {
  config: Config;
  kv: Deno.Kv;
  /** Whether KV works and is still the store this process opened. */
  kvHealth: KvHealth;
  clock: Clock;
  logger: Logger;
  catalogue: Catalogue;
  providers: ProviderLookup;
  keys: KeyStore;
  /** The health of models' routes in this process. */
  routes: RouteHealth;
  /** Numbers in [0, 1) (route choice); injected so tests are deterministic. */
  random: () => number;
  /** The time limits of request bodies (`server.body_timeout_ms`), on one timer. */
  bodyTimers: Expiries;
  /** The steps around chat calls' models, outermost first (see model_step.ts). */
  modelSteps: readonly ModelStep[];
  /** Files and batches, and the engine that runs batches from the KV queue. */
  batches: BatchRunner;
}

/** An endpoint.s handler: answers a request that passed every step before it. */
export type Handler = (ctx: RequestContext) => Response | Promise<Response>;

/** How a request's caller is identified: by the API key it may send (`key`), by the admin
 * token (`admin`), or not at all (`none`: the anonymous caller). */
export type AuthMode = "key" | "admin" | "none";

/** An endpoint's error shape: a protocol's, or `"versioned"` for paths several protocols call
 * (`/v1/models`): Anthropic's for a request with `anthropic-version` (its SDKs send it on
 * every call), Google's for a caller with `x-goog-api-key`, else OpenAI's. */
export type EndpointErrors = ErrorStyle | "versioned";

/** What answers a request: chosen by the dispatch step, built once per resource and method. */
export interface Endpoint {
  readonly handler: Handler;
  /** The limit scope the request counts against, or `null` when it is not limited. */
  readonly scope: LimitScope | null;
  readonly auth: AuthMode;
  /** Whether the body step reads a JSON object body for the handler. */
  readonly json: boolean;
  /** The error shape its errors are answered in (OpenAI's unless said). */
  readonly errors?: EndpointErrors;
  /** The path template of its resource (`/v1/models/:id`), for metrics. */
  readonly path?: string;
  /** Whether its calls reserve tokens and spend (token limits, budgets): chat and embeddings. */
  readonly metered?: boolean;
}

/** Whom an internal request (a batch line, see src/batches/) runs as: set only by the app's
 * internal entry point, never from anything a client sends; the auth step takes it instead of
 * reading a key from the request. */
export interface OnBehalf {
  /** The batch's owner, as a key caller (its record read from KV for this line). */
  caller: Caller;
  /** The batch the request is a line of (its log record's `batch_id`). */
  batchId: string;
}

/** A request between the settle step and its settling (see settle.ts). */
export interface OpenRequest {
  ctx: RequestContext;
  /** `performance.now()` when its response was ready, or `null`. */
  responded: number | null;
  /** What its stream produced, once one began. */
  tally: StreamTally | null;
}

/** Runs the settle hooks of a request (see settle.ts). */
export interface SettleRunner {
  run(ctx: RequestContext, status: number, error: string | null): void;
}

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});
const NO_BODY: Record<string, unknown> = Object.freeze({});

/** One request: its data (read-only) and the steps' state. A class, not an object literal:
 * the literal with a getter and closures per request cost ~8 µs of CPU and doubled GC time. */
export class RequestContext {
  readonly url: URL;
  /** The `Host` header is not a host: the request is answered 400 (see http/request_url.ts). */
  readonly invalidHost: boolean;
  readonly requestId = "req_" + crypto.randomUUID().replaceAll("-", "");
  /** `performance.now()` at arrival, for durations. */
  readonly started = performance.now();

  // Resource step.
  /** What answers the request; set by the dispatch step, before any step after it runs. */
  endpoint!: Endpoint;
  /** Path parameters of the matched path (`/admin/keys/:id` -> `id`). */
  params: Readonly<Record<string, string>> = NO_PARAMS;

  /** Set for a batch line (by the app's internal entry point only): whom it runs as. */
  onBehalf: OnBehalf | null = null;

  // Auth step.
  /** Who the request says it is (anonymous unless the endpoint identifies callers by key). */
  caller: Caller = ANONYMOUS_CALLER;

  // Admit step.
  /** Who made the request, as admitted (a key's record proven current). */
  principal: Principal = ANONYMOUS;
  /** The rate-limit window the request was admitted in (for its response headers), if any. */
  window: WindowState | null = null;
  /** When it was admitted (clock ms). */
  admittedAt = 0;
  /** The refusal of a request whose admission was decided while its work ran (see the admit
   * step): its work was stopped, and it is answered with this. */
  refused: ApiError | null = null;

  // Concurrency step.
  /** The key's concurrency slot the request holds (only for capped keys), until it settles. */
  lease: Lease | null = null;

  // Reserve step.
  /** The tokens and spend held for the request (under token limits or a budget), until it
   * settles. */
  held: Held | null = null;
  /** The token window for the response headers, if any. */
  tokenWindow: WindowState | null = null;

  // Body step.
  /** Fires when the client goes away (the server's `request.signal`), or when the admit step
   * refuses the request. */
  signal: AbortSignal;
  /** The JSON object body, for endpoints that read one (empty otherwise, and once
   * {@link takeBody} took it). */
  body: Record<string, unknown> = NO_BODY;
  /** The bytes {@link body} was read from, for a call passed on as the client wrote it (let go
   * of with the body, and by a chat call that is not passed on). */
  bodyBytes: Uint8Array | null = null;

  // Front doors (what settle reports).
  /** The model asked for, once known. */
  model: string | null = null;
  /** The provider of the resolved model (of the route tried last, when it has several: the one
   * that served, or whose error was answered). */
  provider: string | null = null;
  /** The route that served (`provider/upstream_model`), when the model has several. */
  route: string | null = null;
  /** The routes that failed and were moved past (see `CallContext.fellBack`), by provider and
   * error code. */
  fallbacks: { provider: string; kind: string }[] = [];
  /** The call's usage, once known (a stream's last usage event). */
  usage: Usage | null = null;
  /** Whether the answer is a stream. */
  stream = false;
  /** What the request's log record shows of its content (only with `logs.include_content`). */
  content: unknown = undefined;
  /** What a model step changes in {@link content} before it is logged (the guardrails: what
   * they redacted, as the model saw it), or `null`. */
  loggedContent: ((content: unknown) => unknown) | null = null;
  /** The verdicts of the model's guardrails, once they ran (`guardrails/step.ts`). */
  guardrails: GuardrailVerdict[] | null = null;

  // Model steps (pipeline/model_step.ts).
  /** What the response cache did for the call: answered it (`hit`), looked it up in vain or
   * skipped the lookup (`miss`), or was not used though the model has one (`bypass`: the key,
   * `Cache-Control: no-store`, an anonymous caller without a namespace); `null`: no cache. */
  cache: "hit" | "miss" | "bypass" | null = null;
  /** Whether the answer's tokens count against the caller's token limits and budget (not for
   * a cache hit, unless its model's cache charges hits). */
  charged = true;
  /** Headers the model steps add to the answer (`x-switchyard-cache`), or `null`. */
  responseHeaders: Record<string, string> | null = null;

  // Respond step.
  /** The code of the error answered (its type when it has none), or `null`. */
  error: string | null = null;

  // Settle step.
  /** Its place among the requests not yet settled (`pipeline/settle.ts`). */
  open: ListEntry<OpenRequest> | null = null;

  #settleLater = false;
  #settled = false;
  #whenSettled: (() => void) | null = null;
  readonly #settle: SettleRunner;

  constructor(
    readonly request: Request,
    readonly remote: Deno.Addr,
    /** The client's IP (the connection's, or a trusted proxy's `X-Forwarded-For` entry). */
    readonly ip: string,
    /** Clock ms at arrival, for the log record's `ts`. */
    readonly arrived: number,
    readonly services: Services,
    settle: SettleRunner,
  ) {
    const url = requestUrl(request);
    this.url = url ?? targetUrl(request);
    this.invalidHost = url === null;
    this.signal = request.signal;
    this.#settle = settle;
  }

  /** The body, which the context then lets go of: a stream's context lives as long as the
   * stream, and the body holds the whole prompt. */
  takeBody(): Record<string, unknown> {
    const body = this.body;
    this.body = NO_BODY;
    this.bodyBytes = null;
    return body;
  }

  /** The body's bytes, which the context then lets go of (see {@link takeBody}). */
  takeBodyBytes(): Uint8Array | null {
    const bytes = this.bodyBytes;
    this.bodyBytes = null;
    return bytes;
  }

  /** Makes {@link signal} also fire when the returned controller aborts. */
  stoppable(): AbortController {
    const stop = followingAbort(this.signal);
    this.signal = stop.signal;
    return stop;
  }

  /** Whether the response's body settles the request when it ends (a stream), not the settle
   * step when the handler returns. */
  get settlesLater(): boolean {
    return this.#settleLater;
  }

  /** Leaves settling to the response's body: call once it will surely call {@link settle}. */
  settleLater(): void {
    this.#settleLater = true;
  }

  /** Settles the request: runs the settle hooks (the log record, ...) with how it ended and its
   * usage. Only the first call counts. */
  settle(status: number, error: string | null): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#settle.run(this, status, error);
    this.#whenSettled?.();
  }

  /** Runs `fn` once the request has settled (at once when it has): what ends with the request,
   * such as a stream's server span. One at a time. */
  whenSettled(fn: () => void): void {
    if (this.#settled) fn();
    else this.#whenSettled = fn;
  }
}
