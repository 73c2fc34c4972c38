import assert from "node:assert/strict";
import { NativeHttpClient } from "../src/http/client/native.ts";
import { startServer, testConfig } from "./support/server.ts";

async function errorBody(res: Response) {
  assert.match(res.headers.get("content-type")!, /^application\/json/);
  const body = await res.json();
  assert.deepEqual(Object.keys(body), ["error"]);
  assert.deepEqual(Object.keys(body.error).sort(), ["code", "message", "param", "type"]);
  return body.error;
}

Deno.test("an unknown path is a 404 with the JSON error body", async () => {
  await using server = await startServer();
  const res = await fetch(`${server.url}/v1/nothing-here`);
  assert.equal(res.status, 404);
  const error = await errorBody(res);
  assert.equal(error.type, "invalid_request_error");
  assert.equal(error.code, "unknown_url");
  assert.equal(error.param, null);
  assert.match(error.message, /GET \/v1\/nothing-here/);
});

Deno.test("a wrong method is a 405 with Allow and the JSON error body", async () => {
  await using server = await startServer();
  const cases: [string, string, string][] = [
    ["DELETE", "/v1/models", "GET, HEAD, OPTIONS"],
    ["GET", "/v1/chat/completions", "POST, OPTIONS"],
    ["PUT", "/v1/moderations", "POST, OPTIONS"],
    ["GET", "/v1/images/generations", "POST, OPTIONS"],
  ];
  for (const [method, path, allow] of cases) {
    const res = await fetch(`${server.url}${path}`, { method });
    assert.equal(res.status, 405, `${method} ${path}`);
    assert.equal(res.headers.get("allow"), allow);
    const error = await errorBody(res);
    assert.equal(error.type, "invalid_request_error");
    assert.equal(error.code, "method_not_allowed");
    assert.match(error.message, new RegExp(`Method ${method} is not allowed`));
  }
});

Deno.test("every response carries a distinct x-request-id, also errors", async () => {
  await using server = await startServer();
  const ids = new Set<string>();
  for (const path of ["/v1/models", "/healthz", "/nope", "/v1/models/"]) {
    const res = await fetch(`${server.url}${path}`);
    await res.body?.cancel();
    const id = res.headers.get("x-request-id");
    assert.match(id ?? "", /^req_[0-9a-f]{32}$/, path);
    ids.add(id!);
  }
  const res = await fetch(`${server.url}/v1/models`, { method: "POST" });
  await res.body?.cancel();
  ids.add(res.headers.get("x-request-id")!);
  assert.equal(ids.size, 5);
  await server.app.services.logger.flush();
  const logged = new Set(server.output.records().map((r) => r.request_id));
  for (const id of ids) assert.ok(logged.has(id), `${id} is in the request log`);
});

Deno.test("a trailing slash and HEAD reach the same route", async () => {
  await using server = await startServer();
  const slash = await fetch(`${server.url}/v1/models/`);
  assert.equal(slash.status, 200);
  assert.equal((await slash.json()).object, "list");
  const head = await fetch(`${server.url}/v1/models`, { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(await head.text(), "");
});

Deno.test("CORS: a preflight from any origin is answered when cors_origins is *", async () => {
  await using server = await startServer();
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: "OPTIONS",
    headers: {
      origin: "https://app.example.com",
      "access-control-request-method": "POST",
      "access-control-request-headers": "authorization, content-type, x-stainless-os",
    },
  });
  assert.equal(res.status, 204);
  assert.equal(res.headers.get("access-control-allow-origin"), "*");
  assert.match(res.headers.get("access-control-allow-methods")!, /POST/);
  assert.equal(
    res.headers.get("access-control-allow-headers"),
    "authorization, content-type, x-stainless-os",
  );
  assert.ok(res.headers.get("x-request-id"));
  const get = await fetch(`${server.url}/v1/models`, { headers: { origin: "https://a.example" } });
  await get.body?.cancel();
  assert.equal(get.headers.get("access-control-allow-origin"), "*");
  assert.match(get.headers.get("access-control-expose-headers")!, /x-request-id/);
  assert.match(get.headers.get("access-control-expose-headers")!, /x-ratelimit-remaining-requests/);
  assert.match(get.headers.get("access-control-expose-headers")!, /x-switchyard-dropped-params/);
});

Deno.test("CORS: only configured origins are allowed", async () => {
  const config = testConfig((raw) => {
    raw.server = { port: 0, cors_origins: ["https://good.example"] };
  });
  await using server = await startServer({ config });
  const preflight = (origin: string) =>
    fetch(`${server.url}/v1/models`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "GET" },
    });
  const good = await preflight("https://good.example");
  await good.body?.cancel();
  assert.equal(good.status, 204);
  assert.equal(good.headers.get("access-control-allow-origin"), "https://good.example");
  assert.equal(good.headers.get("vary"), "Origin");
  const bad = await preflight("https://evil.example");
  assert.equal(bad.status, 403);
  assert.equal((await errorBody(bad)).code, "cors_origin_not_allowed");
  assert.equal(bad.headers.get("access-control-allow-origin"), null);
  const get = await fetch(`${server.url}/v1/models`, {
    headers: { origin: "https://evil.example" },
  });
  await get.body?.cancel();
  assert.equal(get.headers.get("access-control-allow-origin"), null);
});

Deno.test("OPTIONS without a preflight answers 204 with Allow", async () => {
  await using server = await startServer();
  const res = await fetch(`${server.url}/v1/models`, { method: "OPTIONS" });
  assert.equal(res.status, 204);
  assert.equal(res.headers.get("allow"), "GET, HEAD, OPTIONS");
});

Deno.test("the client IP is the connection's unless trust_proxy is on and enough proxies wrote an IP", async () => {
  const forwarded = { "x-forwarded-for": "203.0.113.7, 198.51.100.2" };
  {
    await using server = await startServer();
    const res = await fetch(`${server.url}/healthz`, { headers: forwarded });
    await res.body?.cancel();
    await server.app.services.logger.flush();
    assert.equal(server.output.records().at(-1)!.ip, "127.0.0.1");
  }
  for (
    const [trust, header, ip] of [
      [true, forwarded, "198.51.100.2"],
      [2, forwarded, "203.0.113.7"],
      // Fewer entries than trusted proxies: the client wrote the header itself.
      [5, forwarded, "127.0.0.1"],
      [2, { "x-forwarded-for": "203.0.113.9" }, "127.0.0.1"],
      // The entry our proxy would have written is no IP.
      [1, { "x-forwarded-for": "x".repeat(3000) }, "127.0.0.1"],
      [2, { "x-forwarded-for": "not-an-ip, 198.51.100.2" }, "127.0.0.1"],
      [1, { "x-forwarded-for": "203.0.113.7, 2001:db8::1" }, "2001:db8::1"],
    ] as const
  ) {
    const config = testConfig((raw) => (raw.server = { port: 0, trust_proxy: trust }));
    await using server = await startServer({ config });
    const res = await fetch(`${server.url}/healthz`, { headers: header });
    await res.body?.cancel();
    await server.app.services.logger.flush();
    assert.equal(server.output.records().at(-1)!.ip, ip, `trust_proxy ${trust}`);
  }
});

Deno.test("app: once requests stop for a whole interval, the upstream client lets go of its kept buffers, once per quiet spell", async () => {
  const http = new NativeHttpClient();
  let trims = 0;
  const trim = http.trim.bind(http);
  http.trim = () => {
    trims++;
    trim();
  };
  await using server = await startServer({ http, trimIntervalMs: 30 });
  const res = await fetch(`${server.url}/v1/models`);
  await res.body?.cancel();
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(trims, 1, "trimmed once the requests stopped");
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(trims, 1, "not again while it stays quiet");
  http.close();
});
