import assert from "node:assert/strict";
import { denoOtel } from "../../src/telemetry/deno_otel.ts";

Deno.test("denoOtel reads OTEL_DENO, its two overrides and OTEL_SDK_DISABLED as Deno does", () => {
  const otel = (vars: Record<string, string>) => denoOtel((name) => vars[name]);
  const both = { tracing: true, metrics: true };
  const none = { tracing: false, metrics: false };
  assert.deepEqual(otel({}), none);
  assert.deepEqual(otel({ OTEL_DENO: "true" }), both);
  assert.deepEqual(otel({ OTEL_DENO: "TRUE" }), both);
  assert.deepEqual(otel({ OTEL_DENO: "1" }), none, "Deno takes true or false only");
  assert.deepEqual(otel({ OTEL_DENO: "true", OTEL_DENO_METRICS: "false" }), {
    tracing: true,
    metrics: false,
  });
  assert.deepEqual(otel({ OTEL_DENO_METRICS: "true" }), { tracing: false, metrics: true });
  assert.deepEqual(otel({ OTEL_DENO_TRACING: "true", OTEL_DENO: "false" }), {
    tracing: true,
    metrics: false,
  });
  assert.deepEqual(otel({ OTEL_DENO: "true", OTEL_SDK_DISABLED: "TRUE" }), none);
});
