/**
 * The parts of the OpenTelemetry JS API that Deno's built-in telemetry (`Deno.telemetry`,
 * active with `OTEL_DENO=true`) implements and Switchyard uses, typed here so that the runtime
 * needs no `@opentelemetry/api` package. Deno exports what is recorded over OTLP, configured by
 * the standard `OTEL_*` variables; its own spans (one per `fetch`, with W3C trace context sent
 * on) come with it. The server span of each request is Switchyard's (its server is its own).
 */

/** An attribute value (a bigint is exported as an OTLP integer, a number as a double). */
export type AttributeValue = string | number | bigint | boolean | string[];

/** A span (OpenTelemetry JS `Span`). */
export interface OtelSpan {
  spanContext(): { traceId: string; spanId: string };
  setAttribute(key: string, value: AttributeValue): unknown;
  setAttributes(attributes: Record<string, AttributeValue>): unknown;
  /** `code` 2 is ERROR. */
  setStatus(status: { code: number; message?: string }): unknown;
  updateName(name: string): unknown;
  end(): void;
}

/** An immutable context (OpenTelemetry JS `Context`). */
export interface OtelContext {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): OtelContext;
}

/** A histogram instrument (OpenTelemetry JS `Histogram`). */
export interface OtelHistogram {
  record(value: number, attributes?: Record<string, AttributeValue>): void;
}

/** What `Deno.telemetry` offers, as used here. */
export interface OtelApi {
  tracerProvider: {
    getTracer(name: string, version?: string): {
      startSpan(
        name: string,
        options: { kind?: number; attributes?: Record<string, AttributeValue> },
        context?: OtelContext,
      ): OtelSpan;
    };
  };
  contextManager: {
    active(): OtelContext;
    with<T>(context: OtelContext, fn: () => T): T;
  };
  meterProvider: {
    getMeter(name: string, version?: string): {
      createHistogram(
        name: string,
        options: { unit?: string; description?: string },
      ): OtelHistogram;
      createObservableGauge(name: string): {
        addCallback(callback: () => void): void;
      };
    };
  };
}

/** The context key of the active span (OpenTelemetry JS's `trace.getSpan`/`setSpan` key,
 * which Deno's context manager shares). */
export const SPAN_KEY = Symbol.for("OpenTelemetry Context Key SPAN");

/** Span kinds (OpenTelemetry JS `SpanKind`). */
export const SPAN_KIND_SERVER = 1;
export const SPAN_KIND_CLIENT = 2;
/** Span status code ERROR. */
export const STATUS_ERROR = 2;
