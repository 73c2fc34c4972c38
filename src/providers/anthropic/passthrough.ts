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
 * `lacksCountTokens` in types.ts.
 */
import { ApiError } from "../../errors.ts";
import type { SseEvent } from "../../http/sse.ts";
import { fromAnthropicUsage } from "./usage.ts";
import { type EventReading, type PassedEvent, PassedEvents } from "../passed_events.ts";
import {
  type CallContext,
  COUNT_TOKENS_UNSUPPORTED,
  type PassthroughAnswer,
  type PassthroughCall,
  type ProviderDeps,
} from "../types.ts";
import { chatPost } from "../upstream/request.ts";
import { withTopLevelString } from "../../http/json_scan.ts";
import type { RetryTiming } from "../upstream/retry.ts";
import { Upstream, type UpstreamStyle } from "../upstream/upstream.ts";
import { isObject, type JsonObject, malformed, parseEventData } from "../wire.ts";
import { ANTHROPIC_PLACE, type MessagesPlace } from "./place.ts";

/** The client headers an Anthropic upstream gets. */
const FORWARDED_HEADERS = ["anthropic-version", "anthropic-beta"];

/** What an upstream without a count_tokens endpoint answers it, as many Anthropic-compatible
 * servers do: no such path (404), or a path of another method (405). */
const NO_COUNT_TOKENS: ReadonlySet<number> = new Set([404, 405]);

/** The error for a count_tokens call that `provider`'s upstream answered with `status`. */
function noCountTokens(provider: string, status: number): ApiError {
  return new ApiError(
    404,
    "not_found_error",
    `The upstream provider "${provider}" has no count_tokens endpoint (HTTP ${status}).`,
    { code: COUNT_TOKENS_UNSUPPORTED },
  );
}

/** Passes Messages API calls through to one Anthropic provider. */
export class AnthropicForwarder {
  readonly #deps: ProviderDeps;
  readonly #style: UpstreamStyle;
  readonly #timing: RetryTiming;

  readonly #streamError: (data: unknown) => ApiError;
  readonly #place: MessagesPlace;

  /** `streamError` reads the data of an upstream `error` event as the gateway's error; `place`
   * says where a body goes (Anthropic's paths unless told). */
  constructor(
    deps: ProviderDeps,
    style: UpstreamStyle,
    streamError: (data: unknown) => ApiError,
    timing: RetryTiming = {},
    place: MessagesPlace = ANTHROPIC_PLACE,
  ) {
    this.#deps = deps;
    this.#style = style;
    this.#streamError = streamError;
    this.#timing = timing;
    this.#place = place;
  }

  async forward(call: PassthroughCall, ctx: CallContext): Promise<PassthroughAnswer> {
    const upstream = this.#upstream(call);
    const endpoint = call.endpoint === "count_tokens" ? "count_tokens" : "messages";
    const placed = { ...call.body, model: ctx.upstreamModel };
    const { path, body } = this.#place(endpoint, placed);
    // The client's bytes with the model id set, when the place takes the body as it is: a
    // 250 KB agent turn written anew cost a third of what the gateway spent passing it on.
    const parts = body === placed && call.raw &&
      withTopLevelString(call.raw, "model", ctx.upstreamModel);
    const post = (stream: boolean) => {
      const request = chatPost(ctx, path, body, stream);
      if (parts) request.rawBody = parts;
      return request;
    };
    if (call.endpoint === "count_tokens" || call.body.stream !== true) {
      const data = await upstream.json(post(false));
      if (!isObject(data)) throw malformed("answer (not a JSON object)");
      if (call.endpoint === "count_tokens") return { kind: "json", body: data, usage: null };
      if (typeof data.model === "string") Object.assign(data, call.shown);
      return { kind: "json", body: data, usage: fromAnthropicUsage(data.usage) };
    }
    // Answered once the upstream answered (an HTTP error is thrown here, where a routed model
    // can still try its next route); the events are read as the client pulls.
    const source = await upstream.call(post(true));
    return {
      kind: "stream",
      batches: new PassedEvents(source, new MessagesEvents(call.shown, this.#streamError)),
    };
  }

  /** An upstream client with the client's version and betas (one per call: the headers are
   * the call's); for count_tokens, one that knows an upstream without it. */
  #upstream(call: PassthroughCall): Upstream {
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
 * A passed-through Messages stream's events: each as it came, `message_start`'s message with
 * the client's fields; the cumulative usage (message_start, then each message_delta); an
 * upstream `error` event passed on, ending the stream as `message_stop` does. A body that
 * ends before either is a 502.
 */
class MessagesEvents implements EventReading {
  readonly #shown: Record<string, unknown>;
  readonly #streamError: (data: unknown) => ApiError;
  /** The cumulative usage fields so far. */
  readonly #usage: JsonObject = {};

  constructor(shown: Record<string, unknown>, streamError: (data: unknown) => ApiError) {
    this.#shown = shown;
    this.#streamError = streamError;
  }

  read(event: SseEvent): PassedEvent {
    const name = event.event;
    if (name === "message_stop") return { data: event.data, ended: true };
    if (name === "error") {
      return {
        data: event.data,
        ended: true,
        failure: this.#streamError(parseEventData(event.data)),
      };
    }
    if (name !== "message_start" && name !== "message_delta") return { data: event.data };
    const parsed = parseEventData(event.data);
    const usage = name === "message_start"
      ? (isObject(parsed.message) ? parsed.message.usage : undefined)
      : parsed.usage;
    const passed: PassedEvent = { data: event.data };
    if (isObject(usage)) {
      for (const [key, value] of Object.entries(usage)) {
        if (typeof value === "number" || isObject(value)) this.#usage[key] = value;
      }
      passed.usage = fromAnthropicUsage(this.#usage);
    }
    if (name === "message_start" && isObject(parsed.message)) {
      Object.assign(parsed.message, this.#shown);
      passed.data = JSON.stringify(parsed);
    }
    return passed;
  }

  unfinished(): Error {
    return malformed("stream: it ended before message_stop");
  }
}
