/**
 * Messages API calls forwarded to an Anthropic upstream as the client wrote them (DESIGN
 * §6.2's same-protocol path): the body with only `model` rewritten to the upstream's id, so
 * that nothing is lost (prompt caching, server tools, documents, fields the gateway does not
 * model); the answer, and each event of a stream, as the upstream sent it with only `model`
 * rewritten back to the gateway's id; the usage read on the way, for the request log.
 *
 * Headers: the client's `anthropic-version` wins over the provider's configured one (the body
 * and the answer are the client's, in the version it speaks); its `anthropic-beta` is
 * forwarded. The provider's own `headers` (the operator's) win over both.
 *
 * An upstream without count_tokens (a 404 or 405 there) is not failing: see
 * {@link lacksCountTokens}.
 */
import type { Usage } from "../../canonical/result.ts";
import { ApiError } from "../../errors.ts";
import type { SseEvent } from "../../http/sse.ts";
import { fromAnthropicUsage } from "./usage.ts";
import type {
  CallContext,
  ForwardedAnswer,
  ForwardedBatch,
  ForwardedCall,
  ProviderDeps,
} from "../types.ts";
import {
  chatPost,
  type RetryTiming,
  Upstream,
  type UpstreamResponse,
  type UpstreamStyle,
} from "../upstream.ts";
import { isObject, type JsonObject, malformed, parseEventData } from "../wire.ts";

/** The client headers an Anthropic upstream gets. */
const FORWARDED_HEADERS = ["anthropic-version", "anthropic-beta"];

const PATHS: Record<ForwardedCall["endpoint"], string> = {
  messages: "/v1/messages",
  count_tokens: "/v1/messages/count_tokens",
};

/** What an upstream without a count_tokens endpoint answers it, as many Anthropic-compatible
 * servers do: no such path (404), or a path of another method (405). */
const NO_COUNT_TOKENS: ReadonlySet<number> = new Set([404, 405]);

/** The code of {@link noCountTokens}'s error. */
const NO_COUNT_TOKENS_CODE = "count_tokens_unsupported";

/**
 * Whether `error` says that the upstream has no count_tokens endpoint (it answered 404 or 405),
 * so that the caller answers its own estimate. It is a 404, not the 502 of a failing upstream:
 * a routed model neither moves to its next route nor counts it against the route's breaker
 * (clients such as Claude Code count tokens before every turn; the route is well).
 */
export function lacksCountTokens(error: unknown): boolean {
  return error instanceof ApiError && error.code === NO_COUNT_TOKENS_CODE;
}

/** The error for a count_tokens call that `provider`'s upstream answered with `status`. */
function noCountTokens(provider: string, status: number): ApiError {
  return new ApiError(
    404,
    "not_found_error",
    `The upstream provider "${provider}" has no count_tokens endpoint (HTTP ${status}).`,
    { code: NO_COUNT_TOKENS_CODE },
  );
}

/** Forwards Messages API calls to one Anthropic provider. */
export class AnthropicForwarder {
  readonly #deps: ProviderDeps;
  readonly #style: UpstreamStyle;
  readonly #timing: RetryTiming;

  readonly #streamError: (data: unknown) => ApiError;

  /** `streamError` reads the data of an upstream `error` event as the gateway's error. */
  constructor(
    deps: ProviderDeps,
    style: UpstreamStyle,
    streamError: (data: unknown) => ApiError,
    timing: RetryTiming = {},
  ) {
    this.#deps = deps;
    this.#style = style;
    this.#streamError = streamError;
    this.#timing = timing;
  }

  async forward(call: ForwardedCall, ctx: CallContext): Promise<ForwardedAnswer> {
    const upstream = this.#upstream(call);
    const body: Record<string, unknown> = { ...call.body, model: ctx.upstreamModel };
    const path = PATHS[call.endpoint];
    if (call.endpoint === "count_tokens" || body.stream !== true) {
      const data = await upstream.json(chatPost(ctx, path, body, false));
      if (!isObject(data)) throw malformed("answer (not a JSON object)");
      if (call.endpoint === "count_tokens") return { kind: "json", body: data, usage: null };
      if (typeof data.model === "string") data.model = ctx.model.id;
      return { kind: "json", body: data, usage: fromAnthropicUsage(data.usage) };
    }
    // Answered once the upstream answered (an HTTP error is thrown here, where a routed model
    // can still try its next route); the events are read as the client pulls.
    const source = await upstream.call(chatPost(ctx, path, body, true));
    return {
      kind: "stream",
      batches: new ForwardedEvents(source, ctx.model.id, this.#streamError),
    };
  }

  /** An upstream client with the client's version and betas (one per call: the headers are
   * the call's); for count_tokens, one that knows an upstream without it. */
  #upstream(call: ForwardedCall): Upstream {
    const headers = { ...this.#style.headers };
    for (const name of FORWARDED_HEADERS) {
      const value = call.headers[name];
      if (value !== undefined) headers[name] = value;
    }
    const style: UpstreamStyle = { ...this.#style, headers };
    if (call.endpoint === "count_tokens") {
      const provider = this.#deps.config.id;
      const mapError = this.#style.mapError?.bind(this.#style);
      style.mapError = (status, detail) =>
        NO_COUNT_TOKENS.has(status)
          ? noCountTokens(provider, status)
          : mapError?.(status, detail) ?? null;
    }
    return new Upstream(this.#deps, style, this.#timing);
  }
}

/**
 * A forwarded stream's bytes, one batch per upstream read that completed events: each event
 * re-encoded as it came (`event:` name and `data:` text), `message_start`'s model rewritten.
 * Ends after `message_stop`; an upstream `error` event is passed on and ends it too; a body
 * that ends without either is a 502. Stopping early (`return`) aborts the upstream call.
 */
class ForwardedEvents implements AsyncIterableIterator<ForwardedBatch> {
  readonly #source: UpstreamResponse;
  readonly #model: string;
  readonly #streamError: (data: unknown) => ApiError;
  #done = false;
  /** The cumulative usage fields so far (message_start, then each message_delta). */
  #usage: JsonObject = {};

  constructor(
    source: UpstreamResponse,
    model: string,
    streamError: (data: unknown) => ApiError,
  ) {
    this.#source = source;
    this.#model = model;
    this.#streamError = streamError;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<ForwardedBatch, undefined>> {
    while (!this.#done) {
      let events: SseEvent[] | null;
      try {
        events = await this.#source.readEvents();
      } catch (e) {
        this.#stop();
        throw e;
      }
      if (events === null) {
        this.#stop();
        throw malformed("stream: it ended before message_stop");
      }
      let text = "";
      let usage: Usage | null = null;
      let failure: ApiError | undefined;
      for (const event of events) {
        const { data, ended, counted } = this.#take(event);
        text += `event: ${event.event}\ndata: ${data.replaceAll("\n", "\ndata: ")}\n\n`;
        if (counted) usage = fromAnthropicUsage(this.#usage);
        if (event.event === "error") failure = this.#streamError(parseEventData(event.data));
        if (ended) {
          this.#done = true;
          this.#source.release();
          break;
        }
      }
      if (text !== "") {
        const batch: ForwardedBatch = { bytes: encoder.encode(text), usage };
        if (failure) batch.failure = failure;
        return { done: false, value: batch };
      }
    }
    return { done: true, value: undefined };
  }

  return(): Promise<IteratorResult<ForwardedBatch, undefined>> {
    this.#stop();
    return Promise.resolve({ done: true, value: undefined });
  }

  /** One event's data as forwarded; whether it ends the stream or reported usage. */
  #take(event: SseEvent): { data: string; ended: boolean; counted: boolean } {
    const name = event.event;
    if (name === "message_stop" || name === "error") {
      return { data: event.data, ended: true, counted: false };
    }
    if (name !== "message_start" && name !== "message_delta") {
      return { data: event.data, ended: false, counted: false };
    }
    const parsed = parseEventData(event.data);
    const usage = name === "message_start"
      ? (isObject(parsed.message) ? parsed.message.usage : undefined)
      : parsed.usage;
    if (isObject(usage)) {
      for (const [key, value] of Object.entries(usage)) {
        if (typeof value === "number" || isObject(value)) this.#usage[key] = value;
      }
    }
    if (name === "message_start" && isObject(parsed.message)) {
      parsed.message.model = this.#model;
      return { data: JSON.stringify(parsed), ended: false, counted: isObject(usage) };
    }
    return { data: event.data, ended: false, counted: isObject(usage) };
  }

  #stop(): void {
    if (this.#done) return;
    this.#done = true;
    this.#source.close();
  }
}

const encoder = new TextEncoder();
