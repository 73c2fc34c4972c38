/**
 * The upstream fault table of README "Timeouts, retries and upstream errors", run against one
 * gateway endpoint that calls the fake OpenAI upstream: 429 stays 429 (with its retry-after,
 * or a default one), a 500 is retried and then a 502, a 408 or 409 is retried as the official
 * SDKs retry it, a 529 is a 503 `upstream_overloaded`, the upstream's own 504 and an upstream
 * that does not answer in time are a 504, a 401 is a 502 that shows the provider key nowhere.
 * Also: a client that leaves closes the upstream call.
 */
import assert from "node:assert/strict";
import { logRecord } from "./client.ts";
import type { Fault } from "./fake_upstream.ts";
import { startGateway } from "./gateway.ts";
import { waitFor } from "./wait.ts";
import type { TestServer } from "./server.ts";

/** How to call the endpoint under test. */
export interface Endpoint {
  /** The gateway path, e.g. `/v1/moderations`. */
  path: string;
  /** The upstream path the call must reach, e.g. `/v1/moderations`. */
  upstreamPath: string;
  /** A valid request body for a model on the `oa` provider. */
  body: Record<string, unknown>;
  /** Models to configure on the gateway (the one `body` names among them). */
  models: Record<string, unknown>[];
}

function post(server: TestServer, path: string, body: unknown, signal?: AbortSignal) {
  return fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

async function expect(
  response: Response,
  status: number,
  code: string,
  message: RegExp,
): Promise<string> {
  const text = await response.text();
  assert.equal(response.status, status, text);
  const error = JSON.parse(text).error;
  assert.equal(error.code, code, text);
  assert.match(error.message, message);
  return text;
}

/** Runs the fault table against `endpoint`; each row is one request. */
export async function assertFaultMapping(endpoint: Endpoint): Promise<void> {
  await using gateway = await startGateway({
    provider: { timeout_ms: 400, max_retries: 2 },
    models: endpoint.models,
  });
  const { server, openai: fake } = gateway;
  const call = async (faults: Fault[]) => {
    fake.faults = faults;
    const before = fake.received.length;
    const response = await post(server, endpoint.path, endpoint.body);
    const calls = fake.received.slice(before);
    for (const c of calls) assert.equal(c.path, endpoint.upstreamPath);
    return { response, calls: calls.length };
  };

  // 429 with a retry-after longer than the deadline: not retried, passed on.
  const limited = await call([{
    status: 429,
    errorType: "rate_limit_error",
    headers: { "retry-after": "3" },
  }]);
  await expect(limited.response, 429, "rate_limit_exceeded", /rate limiting/);
  assert.equal(limited.response.headers.get("retry-after"), "3");
  assert.equal(limited.calls, 1);

  // 429 without a retry-after (as often as the deadline lets the gateway retry): still one for
  // the client (1 s by default).
  const bare = { status: 429, errorType: "rate_limit_error" };
  const unsaid = await call([bare, bare, bare]);
  await expect(unsaid.response, 429, "rate_limit_exceeded", /rate limiting/);
  assert.equal(unsaid.response.headers.get("retry-after"), "1");

  // A 408 and a 409 (retried, as the official SDKs retry them), then the answer.
  const timedOut = await call([{ status: 408, headers: { "retry-after-ms": "1" } }, {
    status: 409,
    headers: { "retry-after-ms": "1" },
  }]);
  assert.equal(timedOut.response.status, 200, await timedOut.response.clone().text());
  await timedOut.response.body?.cancel();
  assert.equal(timedOut.calls, 3);

  // 529 (overloaded) three times: a 503; the upstream's 504 three times: a 504.
  const fault529 = {
    status: 529,
    errorType: "overloaded_error",
    headers: { "retry-after-ms": "1" },
  };
  const overloaded = await call([fault529, fault529, fault529]);
  await expect(overloaded.response, 503, "upstream_overloaded", /overloaded \(HTTP 529/);
  assert.equal(overloaded.calls, 3);
  const fault504 = { status: 504, errorType: "timeout_error", headers: { "retry-after-ms": "1" } };
  const gatewayTimeout = await call([fault504, fault504, fault504]);
  await expect(gatewayTimeout.response, 504, "upstream_timeout", /HTTP 504/);
  assert.equal(gatewayTimeout.calls, 3);

  // 500 three times (the first try and max_retries 2): a 502.
  const fault500 = { status: 500, errorType: "server_error", headers: { "retry-after-ms": "1" } };
  const failed = await call([fault500, fault500, fault500]);
  await expect(failed.response, 502, "upstream_error", /HTTP 500/);
  assert.equal(failed.calls, 3);

  // A 500, then success: the retry answers.
  const retried = await call([fault500]);
  assert.equal(retried.response.status, 200, await retried.response.clone().text());
  await retried.response.body?.cancel();
  assert.equal(retried.calls, 2);

  // 401 whose message repeats the key: a 502 naming neither.
  const refused = await call([{
    status: 401,
    errorType: "invalid_request_error",
    errorCode: "invalid_api_key",
    message: `Incorrect API key provided: ${fake.apiKey}.`,
  }]);
  const text = await expect(refused.response, 502, "upstream_error", /credentials/);
  assert.ok(!text.includes(fake.apiKey));
  assert.equal(refused.calls, 1);
  await logRecord(server, refused.response.headers.get("x-request-id"));
  assert.match(server.output.err, /refused the API key \(HTTP 401/);
  assert.ok(!server.output.out.includes(fake.apiKey) && !server.output.err.includes(fake.apiKey));

  // No answer within timeout_ms: a 504.
  const slow = await call([{ delayMs: 2_000 }]);
  await expect(slow.response, 504, "upstream_timeout", /did not answer within 400 ms/);
  assert.equal(slow.calls, 1);
}

/**
 * A client that disconnects while the upstream works: the gateway closes its upstream call
 * (the fake sees its caller go) and logs a 499.
 */
export async function assertDisconnectAborts(endpoint: Endpoint): Promise<void> {
  await using gateway = await startGateway({ models: endpoint.models });
  const { server, openai: fake } = gateway;
  // The fake notices a closed connection when it answers (see Fault.delayMs).
  fake.faults = [{ delayMs: 500 }];
  const abort = new AbortController();
  const pending = post(server, endpoint.path, endpoint.body, abort.signal).catch((e) => e);
  await waitFor(() => fake.received.length === 1, "the upstream call");
  abort.abort();
  assert.equal((await pending).name, "AbortError");
  await waitFor(
    () => server.output.records().find((r) => r.path === endpoint.path && r.status === 499),
    "the 499 log record",
  );
  await waitFor(() => fake.last.wentAway, "the upstream call to be closed");
  assert.equal(fake.received.length, 1);
}
