import assert from "node:assert/strict";
import {
  credentialsRefused,
  mapStreamError,
  mapUpstreamStatus,
} from "../../../src/providers/upstream/error_mapping.ts";
import { said } from "../../support/upstream_calls.ts";

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);
const none = new Headers();

Deno.test("mapUpstreamStatus: the fault table of DESIGN §6", () => {
  const row = (status: number, detail = said("upstream text"), headers = none) => {
    const e = mapUpstreamStatus("p", status, detail, headers, NOW, { id: "gw", upstream: "up-1" });
    return [e.status, e.type, e.code];
  };
  assert.deepEqual(row(429), [429, "rate_limit_error", "rate_limit_exceeded"]);
  assert.deepEqual(row(429, said("q", { code: "insufficient_quota" })), [
    429,
    "rate_limit_error",
    "insufficient_quota",
  ]);
  assert.deepEqual(row(400), [400, "invalid_request_error", "upstream_invalid_request"]);
  assert.deepEqual(row(422), [400, "invalid_request_error", "upstream_invalid_request"]);
  assert.deepEqual(row(400, said("bad", { type: "invalid_request_error" })), [
    400,
    "invalid_request_error",
    "invalid_request_error",
  ]);
  assert.deepEqual(row(413), [413, "invalid_request_error", "request_too_large"]);
  for (const status of [401, 403, 404, 408, 409, 500, 502, 503]) {
    assert.deepEqual(row(status), [502, "upstream_error", "upstream_error"], `HTTP ${status}`);
  }
  // Whatever the upstream's style: an overload is a 503 (Anthropic's 529 on /v1/messages), the
  // upstream's own gateway timeout a 504, as the gateway's own deadline is.
  assert.deepEqual(row(529), [503, "upstream_error", "upstream_overloaded"]);
  assert.deepEqual(row(504), [504, "upstream_error", "upstream_timeout"]);
});

Deno.test("mapUpstreamStatus: an overloaded upstream is Anthropic's own 529 on the Messages door", () => {
  const busy = (headers: Record<string, string> = {}) =>
    mapUpstreamStatus(
      "p",
      529,
      said("Overloaded", { type: "overloaded_error" }),
      new Headers(headers),
      NOW,
    );
  const e = busy();
  assert.match(e.message, /"p" is overloaded \(HTTP 529 overloaded_error\)/);
  assert.equal(e.inStyle("openai"), e);
  const anthropic = e.inStyle("anthropic");
  assert.equal(anthropic.status, 529);
  assert.deepEqual(anthropic.toAnthropicBody(), {
    type: "error",
    error: { type: "overloaded_error", message: e.message },
  });
  assert.equal(e.toAnthropicBody().error.type, "overloaded_error");
  assert.equal(e.headers, undefined);
  assert.equal(new Headers(busy({ "retry-after": "7" }).headers).get("retry-after"), "7");
  assert.equal(
    new Headers(busy({ "retry-after": "7" }).inStyle("anthropic").headers).get("retry-after"),
    "7",
  );
  // Every other error keeps its status on the Messages door.
  const other = mapUpstreamStatus("p", 500, said("x"), none, NOW);
  assert.equal(other.inStyle("anthropic"), other);
});

Deno.test("mapUpstreamStatus: a 400 keeps the upstream's message, code and param, with our model id", () => {
  const e = mapUpstreamStatus(
    "p",
    400,
    said("This model's maximum context length for up-1 is 8192 tokens.", {
      code: "context_length_exceeded",
      param: "messages",
    }),
    none,
    NOW,
    { id: "gw", upstream: "up-1" },
  );
  assert.equal(e.message, "This model's maximum context length for gw is 8192 tokens.");
  assert.equal(e.code, "context_length_exceeded");
  assert.equal(e.param, "messages");
});

Deno.test("mapUpstreamStatus: the upstream model is renamed only where it stands as a name", () => {
  const rename = (message: string, upstream: string) =>
    mapUpstreamStatus("p", 400, said(message), none, NOW, { id: "gw-id", upstream }).message;
  assert.equal(rename("fake 400 from fa.", "fa"), "fake 400 from gw-id.");
  assert.equal(
    rename("model 'gpt-4o' (not gpt-4o-mini) failed", "gpt-4o"),
    "model 'gw-id' (not gpt-4o-mini) failed",
  );
  assert.equal(
    rename("models/gemini-2.5-pro is unknown", "gemini-2.5"),
    "models/gemini-2.5-pro is unknown",
  );
  assert.equal(rename("a+b? is odd", "a+b?"), "gw-id is odd");
  assert.equal(rename("too long for up-1: 9 > 8", "up-1"), "too long for gw-id: 9 > 8");
  assert.equal(rename("no llama3:8b here", "llama3"), "no llama3:8b here");
  assert.equal(rename("models/gemini-up is not found", "gemini-up"), "models/gw-id is not found");
});

Deno.test("mapUpstreamStatus: 401/403 never repeat the upstream's message", () => {
  for (const status of [401, 403]) {
    const e = mapUpstreamStatus(
      "p",
      status,
      said("Incorrect API key provided: sk-abc123"),
      none,
      NOW,
    );
    assert.ok(!e.message.includes("sk-abc123"));
    assert.match(e.message, /credentials/);
  }
});

Deno.test("credentialsRefused: names the credential the provider uses, an API key by default", () => {
  const byDefault = credentialsRefused("p", 401);
  assert.equal(byDefault.status, 502);
  assert.match(
    byDefault.message,
    /"p" refused .*\(HTTP 401\); the operator must check its API key\.$/,
  );
  const vertex = credentialsRefused("vx", 403, "its service account (credentials_env)");
  assert.match(vertex.message, /\(HTTP 403\); the operator must check its service account/);
  assert.ok(!vertex.message.includes("API key"));
});

Deno.test("mapUpstreamStatus: 429 passes a retry-after in whole seconds", () => {
  const e = (h: Record<string, string>) =>
    new Headers(mapUpstreamStatus("p", 429, said("slow down"), new Headers(h), NOW).headers)
      .get("retry-after");
  assert.equal(e({ "retry-after": "12" }), "12");
  assert.equal(e({ "retry-after-ms": "1500" }), "2");
  assert.equal(e({ "retry-after": new Date(NOW + 30_000).toUTCString() }), "30");
  // Without one: the rate-limit resets (OpenAI's durations, Anthropic's times), else 1 s.
  assert.equal(e({}), "1");
  assert.equal(e({ "x-ratelimit-reset-requests": "6m0s" }), "360");
  assert.equal(
    e({
      "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": "1.5s",
      "x-ratelimit-remaining-tokens": "8000",
      "x-ratelimit-reset-tokens": "6m0s",
    }),
    "2",
    "the window with nothing left",
  );
  assert.equal(
    e({ "x-ratelimit-reset-requests": "20ms", "x-ratelimit-reset-tokens": "1m30.2s" }),
    "91",
    "none says which: the latest",
  );
  assert.equal(
    e({
      "anthropic-ratelimit-requests-remaining": "0",
      "anthropic-ratelimit-requests-reset": new Date(NOW + 12_000).toISOString(),
      "anthropic-ratelimit-tokens-remaining": "5000",
      "anthropic-ratelimit-tokens-reset": new Date(NOW + 50_000).toISOString(),
    }),
    "12",
  );
  assert.equal(e({ "retry-after": "4", "x-ratelimit-reset-requests": "6m0s" }), "4");
  // Quota is not a wait: no retry-after.
  const quota = mapUpstreamStatus("p", 429, said("q", { code: "insufficient_quota" }), none, NOW);
  assert.equal(quota.headers, undefined);
});

Deno.test("mapStreamError: mid-stream errors keep the upstream's kind and drop the key", () => {
  const e = mapStreamError(
    "p",
    said("Overloaded sk-secret", { type: "overloaded_error" }),
    "sk-secret",
  );
  assert.equal(e.status, 502);
  assert.equal(e.type, "upstream_error");
  assert.match(e.message, /overloaded_error/);
  assert.ok(!e.message.includes("sk-secret"));
  const r = mapStreamError("p", said("slow", { type: "rate_limit_error" }), null);
  assert.deepEqual([r.status, r.type, r.code], [429, "rate_limit_error", "rate_limit_exceeded"]);
});
