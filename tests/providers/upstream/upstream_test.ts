import assert from "node:assert/strict";
import { FetchHttpClient } from "../../../src/http/client/fetch.ts";
import { NativeHttpClient } from "../../../src/http/client/native.ts";
import type { HttpClient } from "../../../src/http/client/types.ts";
import { Upstream } from "../../../src/providers/upstream/upstream.ts";
import { answer, RawServer } from "../../http/client/raw_server.ts";
import { providerDeps } from "../../support/provider_call.ts";
import { gatewayError } from "../../support/rejection.ts";
import { answering, chatRequest, endless, said } from "../../support/upstream_calls.ts";
import { waitFor } from "../../support/wait.ts";

Deno.test("an error body is read no further than 64 KiB", async () => {
  const body = endless('{"error": {"message": "', "x".repeat(1000));
  const { upstream, request } = answering(new Response(body.stream, { status: 400 }));
  const error = await gatewayError(() => upstream.json(request(false)));
  assert.equal(error.status, 400);
  assert.match(error.message, /rejected the request \(HTTP 400\)|not JSON/);
  assert.ok(body.pulled() <= 64 * 1024 + 2 * 1000, `pulled ${body.pulled()}`);
  await waitFor(body.cancelled, "the body to be cancelled");
});

Deno.test("a warning repeats what the upstream said about a request only with include_content", async () => {
  const prompt = "my secret diary entry";
  for (const includeContent of [false, true]) {
    const { upstream, request, deps } = answering(
      Response.json({
        error: { message: `'${prompt}' is not allowed`, type: "invalid_request_error" },
      }, { status: 400 }),
    );
    deps.includeContent = includeContent;
    const error = await gatewayError(() => upstream.json(request(false)));
    assert.equal(error.message, `'${prompt}' is not allowed`, "the caller is told");
    assert.match(deps.output.err, /upstream answered HTTP 400 invalid_request_error/);
    assert.equal(deps.output.err.includes(prompt), includeContent);
  }
});

Deno.test("a compressed answer is a 502 that names the encoding, logged as such and not retried", async () => {
  let calls = 0;
  await using server = new RawServer(async (peer) => {
    calls++;
    await peer.request();
    await peer.send(
      answer("200 OK", ["content-type: application/json", "content-encoding: gzip"], "\x1f\x8b"),
    );
    await peer.clientClosed();
  });
  const deps = providerDeps("openai", server.url("/v1").replace(/\/$/, ""), null, {
    max_retries: 2,
  });
  deps.http = new NativeHttpClient();
  const upstream = new Upstream(deps, { headers: {}, parseError: () => said("x") });
  const error = await gatewayError(() => upstream.json(chatRequest(false)));
  assert.equal(error.status, 502);
  assert.equal(error.code, "upstream_error");
  assert.match(error.message, /Content-Encoding gzip/);
  assert.equal(calls, 1, "not retried: it would answer the same way");
  assert.match(deps.output.err, /refused the answer/);
  assert.doesNotMatch(deps.output.err, /could not connect/);
});

/** The two clients an upstream may be called with. */
const CLIENTS: [name: string, make: () => HttpClient][] = [
  ["native", () => new NativeHttpClient()],
  ["fetch", () => new FetchHttpClient()],
];

for (const [name, make] of CLIENTS) {
  Deno.test(`[${name}] an answer under a transfer coding besides chunked is a 502 that names it, not retried`, async () => {
    let calls = 0;
    await using server = new RawServer(async (peer) => {
      calls++;
      await peer.request();
      await peer.send(
        answer(
          "200 OK",
          ["content-type: application/json", "transfer-encoding: gzip, chunked"],
          "2\r\n\x1f\x8b\r\n0\r\n\r\n",
        ),
      );
      await peer.clientClosed();
    });
    const deps = providerDeps("openai", server.url("/v1").replace(/\/$/, ""), null, {
      max_retries: 2,
    });
    deps.http = make();
    const upstream = new Upstream(deps, { headers: {}, parseError: () => said("x") });
    const error = await gatewayError(() => upstream.json(chatRequest(false)));
    assert.equal(error.status, 502);
    assert.equal(error.code, "upstream_error");
    assert.match(error.message, /answered with Transfer-Encoding gzip, chunked, which the gateway/);
    assert.equal(calls, 1, "not retried: it would answer the same way");
    assert.match(deps.output.err, /refused the answer/);
    assert.doesNotMatch(deps.output.err, /could not connect/);
    deps.http.close();
  });
}
