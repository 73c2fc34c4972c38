/** An in-memory stand-in for Deno's OpenTelemetry API, for the tracing tests. */
import type { AttributeValue, OtelApi, OtelContext } from "../../src/telemetry/otel.ts";
import { SPAN_KEY } from "../../src/telemetry/otel.ts";

/** A span as recorded. */
export interface Recorded {
  name: string;
  kind: number | undefined;
  attributes: Record<string, AttributeValue>;
  status: { code: number; message?: string } | null;
  ended: number;
  parent: unknown;
}

/** An in-memory stand-in for Deno.telemetry that records spans and histogram points; the
 * active span at first is `"server span"`. */
export function recordingOtel() {
  const spans: Recorded[] = [];
  const points: { name: string; value: number; attributes: Record<string, AttributeValue> }[] = [];
  const context = (values: Map<symbol, unknown>): OtelContext => ({
    getValue: (key) => values.get(key),
    setValue: (key, value) => context(new Map([...values, [key, value]])),
  });
  let active = context(new Map([[SPAN_KEY, "server span"]]));
  const api: OtelApi = {
    tracerProvider: {
      getTracer: () => ({
        startSpan(name, options, parent) {
          const span: Recorded = {
            name,
            kind: options.kind,
            attributes: { ...options.attributes },
            status: null,
            ended: 0,
            parent: parent?.getValue(SPAN_KEY),
          };
          spans.push(span);
          return {
            spanContext: () => ({ traceId: "t", spanId: String(spans.length) }),
            setAttribute: (key, value) => (span.attributes[key] = value),
            setAttributes: (attributes) => Object.assign(span.attributes, attributes),
            setStatus: (status) => (span.status = status),
            updateName: (name) => (span.name = name),
            end: () => void span.ended++,
          };
        },
      }),
    },
    contextManager: {
      active: () => active,
      with(ctx, fn) {
        const before = active;
        active = ctx;
        try {
          return fn();
        } finally {
          active = before;
        }
      },
    },
    meterProvider: {
      getMeter: () => ({
        createHistogram: (name) => ({
          record: (value, attributes = {}) => void points.push({ name, value, attributes }),
        }),
        createObservableGauge: () => ({ addCallback: () => {} }),
      }),
    },
  };
  return { api, spans, points };
}
