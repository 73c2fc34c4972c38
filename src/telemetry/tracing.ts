/**
 * Traces and OTel metrics of model calls (DESIGN §9), through Deno's built-in OpenTelemetry:
 * this makes the server span of each request (honouring an incoming W3C `traceparent`, as
 * `Deno.serve` does for its own), names it after its route and adds, per provider call (a
 * route's or a fallback's attempt), a CLIENT span with the GenAI semantic conventions, parent
 * of the HTTP attempts (retries) made for it. Message content is recorded only with
 * `logs.include_content`.
 */
import type { Message } from "../canonical/conversation.ts";
import type { CanonicalEvent } from "../canonical/events.ts";
import type { CanonicalResult, Usage } from "../canonical/result.ts";
import type { ProviderConfig, ProviderStyle } from "../config/types.ts";
import { ApiError } from "../errors.ts";
import type { GuardrailVerdict } from "../guardrails/report.ts";
import { guardrailAttributes } from "./guardrail_attributes.ts";
import { denoOtel } from "./deno_otel.ts";
import { exportIntervalMs, ReaderTicks } from "./reader_ticks.ts";
import type { CallContext } from "../providers/types.ts";
import {
  type AttributeValue,
  type OtelApi,
  type OtelContext,
  type OtelHistogram,
  type OtelSpan,
  SPAN_KEY,
  SPAN_KIND_CLIENT,
  SPAN_KIND_SERVER,
  STATUS_ERROR,
} from "./otel.ts";

/** `gen_ai.provider.name` of each upstream style (the simulator is Switchyard's own). */
const PROVIDER_NAMES: Record<ProviderStyle, string> = {
  openai: "openai",
  anthropic: "anthropic",
  gemini: "gcp.gemini",
  azure: "azure.ai.openai",
  vertex: "gcp.vertex_ai",
  bedrock: "aws.bedrock",
  simulator: "switchyard.simulator",
};

/** What a model call's span says about the call before it is made. */
export interface ModelCallStart {
  /** `gen_ai.operation.name`: `chat`, `embeddings`. */
  operation: string;
  config: ProviderConfig;
  call: CallContext;
  /** A chat's messages (none for other operations). */
  messages: readonly Message[];
  /** A chat's sampling options (none for other operations). */
  options?: { maxTokens: number; temperature?: number; topP?: number };
  stream: boolean;
}

/** What a request's server span tells of it once its response is ready, besides HTTP. */
export interface ServedRequest {
  /** Its guardrails' verdicts so far (`null`: its model has none). */
  guardrails: readonly GuardrailVerdict[] | null;
  /** Whether the response's body settles the request when it ends (a stream). */
  readonly settlesLater: boolean;
  /** Runs `fn` once the request has settled (at once when it has). */
  whenSettled(fn: () => void): void;
}

/** Spans and instruments of the app, over Deno's telemetry. */
export class Tracing {
  readonly #api: OtelApi;
  readonly #tracer: ReturnType<OtelApi["tracerProvider"]["getTracer"]>;
  readonly #includeContent: boolean;
  readonly #tokenUsage: OtelHistogram;
  readonly #duration: OtelHistogram;
  readonly #ticks: ReaderTicks | null;

  /** Tracing over `api` (default `Deno.telemetry`) when Deno exports traces or metrics
   * (`OTEL_DENO=true`, see {@link denoOtel}), else `null`; message content with
   * `includeContent` (`logs.include_content`). */
  static configured(
    env: (name: string) => string | undefined,
    api: OtelApi | undefined,
    includeContent: boolean,
  ): Tracing | null {
    const otel = denoOtel(env);
    if (!otel.tracing && !otel.metrics) return null;
    const ticks = otel.metrics
      ? new ReaderTicks(exportIntervalMs(env("OTEL_METRIC_EXPORT_INTERVAL")))
      : undefined;
    return new Tracing(api ?? (Deno.telemetry as OtelApi), includeContent, ticks);
  }

  /** `ticks`: follows the metric reader's ticks, for {@link beforeExit}. */
  constructor(api: OtelApi, includeContent: boolean, ticks?: ReaderTicks) {
    this.#api = api;
    this.#ticks = ticks ?? null;
    this.#tracer = api.tracerProvider.getTracer("switchyard");
    this.#includeContent = includeContent;
    const meter = api.meterProvider.getMeter("switchyard");
    this.#tokenUsage = meter.createHistogram("gen_ai.client.token.usage", {
      unit: "{token}",
      description: "Tokens used per model call, by type (input, output).",
    });
    this.#duration = meter.createHistogram("gen_ai.client.operation.duration", {
      unit: "s",
      description: "Seconds a model call took, to its last event.",
    });
    // Observes nothing: its callback is how the reader's asks are seen.
    if (ticks) {
      meter.createObservableGauge("switchyard.reader_ticks").addCallback(() => ticks.observed());
    }
  }

  /**
   * Runs `handle` in the server span of `request` (the child of the caller's `traceparent`, if
   * it sent a valid one), with the attributes Deno's own server span has: the method and URL,
   * then the response's status (an ERROR status for a 5xx or a throw), and what `served` tells
   * of the request then (its guardrails' verdicts).
   */
  async serve(
    request: Request,
    handle: () => Promise<Response>,
    served?: () => ServedRequest,
  ): Promise<Response> {
    const manager = this.#api.contextManager;
    let parent = manager.active();
    const caller = remoteSpan(request.headers.get("traceparent"));
    if (caller) parent = parent.setValue(SPAN_KEY, caller);
    const url = new URL(request.url);
    // Google's clients may send their API key as `?key=`: spans never show it.
    if (url.searchParams.has("key")) url.searchParams.set("key", "REDACTED");
    const span = this.#tracer.startSpan(request.method, {
      kind: SPAN_KIND_SERVER,
      attributes: {
        "http.request.method": request.method,
        "url.full": url.href,
        "url.scheme": url.protocol.slice(0, -1),
        "url.path": url.pathname,
        "url.query": url.search.slice(1),
      },
    }, parent);
    let ends = true;
    try {
      const response = await manager.with(parent.setValue(SPAN_KEY, span), handle);
      span.setAttribute("http.response.status_code", String(response.status));
      // Whether the response cache answered (docs/caching.md).
      const cache = response.headers.get("x-switchyard-cache");
      if (cache !== null) span.setAttribute("switchyard.cache", cache);
      if (response.status >= 500) {
        span.setAttribute("error.type", String(response.status));
        span.setStatus({ code: STATUS_ERROR, message: response.statusText });
      }
      const what = served?.();
      if (what?.settlesLater) {
        // A stream's span lasts as long as the stream, and has its output guardrails' verdicts.
        ends = false;
        what.whenSettled(() => {
          if (what.guardrails) span.setAttributes(guardrailAttributes(what.guardrails));
          span.end();
        });
      } else if (what?.guardrails) {
        span.setAttributes(guardrailAttributes(what.guardrails));
      }
      return response;
    } catch (e) {
      span.setAttribute("error.type", e instanceof Error ? e.name : "Error");
      span.setStatus({ code: STATUS_ERROR, message: e instanceof Error ? e.message : String(e) });
      throw e;
    } finally {
      if (ends) span.end();
    }
  }

  /** Names the active server span after the route (`POST /v1/chat/completions`) and sets its
   * `http.route`. */
  route(method: string, route: string): void {
    const span = this.#api.contextManager.active().getValue(SPAN_KEY) as OtelSpan | undefined;
    if (!span) return;
    span.updateName(`${method} ${route}`);
    span.setAttribute("http.route", route);
  }

  /** Resolves when the process may exit without meeting a tick of Deno's metric reader
   * ({@link ReaderTicks}); at once without one. */
  beforeExit(): Promise<void> {
    return this.#ticks?.quiet() ?? Promise.resolve();
  }

  /** Starts the span of one model call, a child of the active span. */
  modelCall(start: ModelCallStart): ModelCallSpan {
    const { config, call, options } = start;
    const attributes: Record<string, AttributeValue> = {
      "gen_ai.operation.name": start.operation,
      "gen_ai.provider.name": PROVIDER_NAMES[config.style],
      "gen_ai.request.model": call.upstreamModel,
      "switchyard.provider.id": config.id,
      "switchyard.model": call.model.id,
      "switchyard.request_id": call.requestId,
      "switchyard.stream": start.stream,
    };
    if (options !== undefined) {
      attributes["gen_ai.request.max_tokens"] = BigInt(options.maxTokens);
      if (options.temperature !== undefined) {
        attributes["gen_ai.request.temperature"] = options.temperature;
      }
      if (options.topP !== undefined) attributes["gen_ai.request.top_p"] = options.topP;
    }
    const server = serverOf(config);
    if (server) {
      attributes["server.address"] = server.address;
      attributes["server.port"] = BigInt(server.port);
    }
    const chat = start.operation === "chat";
    if (this.#includeContent && chat) {
      attributes["gen_ai.input.messages"] = JSON.stringify(start.messages.map(loggedMessage));
    }
    const parent = this.#api.contextManager.active();
    const span = this.#tracer.startSpan(
      `${start.operation} ${call.upstreamModel}`,
      { kind: SPAN_KIND_CLIENT, attributes },
      parent,
    );
    return new ModelCallSpan({
      api: this.#api,
      span,
      context: parent.setValue(SPAN_KEY, span),
      signal: call.signal,
      includeContent: this.#includeContent && chat,
      metrics: { tokenUsage: this.#tokenUsage, duration: this.#duration },
      metricAttributes: {
        "gen_ai.operation.name": start.operation,
        "gen_ai.provider.name": PROVIDER_NAMES[config.style],
        "gen_ai.request.model": call.upstreamModel,
        "gen_ai.response.model": call.upstreamModel,
      },
    });
  }
}

interface ModelCallSpanParts {
  api: OtelApi;
  span: OtelSpan;
  /** The active context with this span. */
  context: OtelContext;
  signal: AbortSignal;
  includeContent: boolean;
  metrics: { tokenUsage: OtelHistogram; duration: OtelHistogram };
  metricAttributes: Record<string, AttributeValue>;
}

/** One model call's span: active while the call runs; ended once with its outcome. */
export class ModelCallSpan {
  readonly #parts: ModelCallSpanParts;
  readonly #started = performance.now();
  #usage: Usage | null = null;
  #finish: CanonicalResult["finish"] | null = null;
  #id: string | undefined;
  #text = "";
  #ended = false;

  constructor(parts: ModelCallSpanParts) {
    this.#parts = parts;
  }

  /** Runs `fn` with this span active (the HTTP attempts it makes become its children). */
  run<T>(fn: () => T): T {
    return this.#parts.api.contextManager.with(this.#parts.context, fn);
  }

  /** Notes a stream's usage, finish reason, answer id and (with content) text. */
  observe(events: readonly CanonicalEvent[]): void {
    for (const event of events) {
      if (event.type === "usage") this.#usage = event.usage;
      else if (event.type === "finish") this.#finish = event.reason;
      else if (event.type === "start" && event.id !== undefined) this.#id = event.id;
      else if (
        this.#parts.includeContent && event.type === "block_delta" && event.delta.type === "text"
      ) this.#text += event.delta.text;
    }
  }

  /** Ends the span of a call that answered (a whole result, or a stream that ended). */
  succeed(result?: CanonicalResult): void {
    if (result) {
      this.#usage = result.usage;
      this.#finish = result.finish;
      this.#id = result.id;
      if (this.#parts.includeContent) {
        this.#text = result.parts.map((p) => p.type === "text" ? p.text : "").join("");
      }
    }
    this.#end(null);
  }

  /** Ends the span of a call that answered with `usage` and no text (embeddings). */
  succeedWith(usage: Usage): void {
    this.#usage = usage;
    this.#end(null);
  }

  /** Ends the span of a call that failed (or that its caller stopped: `client_disconnected`). */
  fail(error: unknown): void {
    this.#end(error);
  }

  #end(error: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    const { span, metrics, metricAttributes } = this.#parts;
    const attributes: Record<string, AttributeValue> = {
      "gen_ai.response.model": metricAttributes["gen_ai.request.model"] as string,
    };
    if (this.#id !== undefined) attributes["gen_ai.response.id"] = this.#id;
    if (this.#finish !== null) attributes["gen_ai.response.finish_reasons"] = [this.#finish];
    const usage = this.#usage;
    if (usage) {
      attributes["gen_ai.usage.input_tokens"] = BigInt(usage.input);
      attributes["gen_ai.usage.output_tokens"] = BigInt(usage.output);
    }
    if (this.#parts.includeContent && error === null) {
      attributes["gen_ai.output.messages"] = JSON.stringify([{
        role: "assistant",
        parts: [{ type: "text", content: this.#text }],
        finish_reason: this.#finish,
      }]);
    }
    const measured = { ...metricAttributes };
    if (error !== null) {
      const type = errorType(error, this.#parts.signal);
      attributes["error.type"] = type;
      measured["error.type"] = type;
      span.setStatus({
        code: STATUS_ERROR,
        message: error instanceof Error ? error.message : String(error),
      });
    }
    span.setAttributes(attributes);
    span.end();
    metrics.duration.record((performance.now() - this.#started) / 1000, measured);
    if (usage) {
      metrics.tokenUsage.record(usage.input, { ...measured, "gen_ai.token.type": "input" });
      metrics.tokenUsage.record(usage.output, { ...measured, "gen_ai.token.type": "output" });
    }
  }
}

/** `error.type`: the gateway's error code (`upstream_error`, `rate_limit_exceeded`, ...),
 * `client_disconnected` when the caller left, else the error's class name. */
function errorType(error: unknown, signal: AbortSignal): string {
  if (error instanceof ApiError) return error.code ?? error.type;
  if (signal.aborted) return "client_disconnected";
  return error instanceof Error ? error.name : "_OTHER";
}

/** A message as `gen_ai.input.messages` shows it: its role and text parts. */
function loggedMessage(message: Message): unknown {
  return {
    role: message.role,
    parts: message.parts.map((p) =>
      p.type === "text" ? { type: "text", content: p.text } : { type: p.type }
    ),
  };
}

/** The host and port of a provider's base URL, if it has one. */
function serverOf(config: ProviderConfig): { address: string; port: number } | null {
  if (!config.base_url) return null;
  try {
    const url = new URL(config.base_url);
    const port = url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
    return { address: url.hostname, port };
  } catch {
    return null;
  }
}

/** W3C `traceparent`: version 00 (or a later one, read as 00), trace id, parent id, flags. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-|$)/;

/** The caller's span named by a `traceparent` value, as a parent for a span of ours, or `null`
 * when there is none or it is not valid (all-zero ids, version ff). */
export function remoteSpan(
  header: string | null,
): { spanContext(): { traceId: string; spanId: string; traceFlags: number } } | null {
  const match = header === null ? null : TRACEPARENT.exec(header.trim());
  if (!match) return null;
  const [, version, traceId, spanId, flags, rest] = match as unknown as string[];
  if (version === "ff" || (version === "00" && rest !== "")) return null;
  if (/^0+$/.test(traceId!) || /^0+$/.test(spanId!)) return null;
  const context = { traceId: traceId!, spanId: spanId!, traceFlags: parseInt(flags!, 16) & 1 };
  return { spanContext: () => context };
}
