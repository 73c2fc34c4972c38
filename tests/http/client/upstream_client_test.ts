import assert from "node:assert/strict";
import { FetchHttpClient } from "../../../src/http/client/fetch.ts";
import { NativeHttpClient } from "../../../src/http/client/native.ts";
import { fetchReason, upstreamClient } from "../../../src/http/client/upstream_client.ts";

/** An environment holding `vars` only. */
const env = (vars: Record<string, string>) => (name: string) => vars[name];

Deno.test("fetchReason names the proxy variable that is set", () => {
  for (const name of ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"]) {
    assert.equal(fetchReason(env({ [name]: "http://proxy.test:3128" })), `${name} is set`);
  }
  assert.equal(
    fetchReason(env({ http_proxy: "http://b.test", HTTPS_PROXY: "http://a.test" })),
    "HTTPS_PROXY is set",
    "the first of them, in the order fetch reads them",
  );
  assert.equal(
    fetchReason(env({ HTTPS_PROXY: "", http_proxy: "http://b.test" })),
    "http_proxy is set",
    "an empty variable is not set",
  );
});

Deno.test("fetchReason: OTEL_DENO on asks for fetch, a proxy first", () => {
  for (const value of ["true", "TRUE", "True", "1"]) {
    assert.equal(fetchReason(env({ OTEL_DENO: value })), "OTEL_DENO is on", value);
  }
  for (const value of ["false", "0", "", "yes", "on"]) {
    assert.equal(fetchReason(env({ OTEL_DENO: value })), null, JSON.stringify(value));
  }
  assert.equal(
    fetchReason(env({ OTEL_DENO: "true", HTTP_PROXY: "http://p.test" })),
    "HTTP_PROXY is set",
  );
});

Deno.test("fetchReason is null when nothing asks for fetch", () => {
  assert.equal(fetchReason(env({})), null);
  assert.equal(fetchReason(env({ NO_PROXY: "*", ALL_PROXY: "socks5://x", PATH: "/bin" })), null);
  assert.equal(fetchReason(() => undefined), null);
});

Deno.test("upstreamClient is Switchyard's own client unless the environment asks for fetch", () => {
  const own = upstreamClient(env({}));
  assert.ok(own instanceof NativeHttpClient);
  own.close();
  const proxied = upstreamClient(env({ https_proxy: "http://proxy.test:3128" }));
  assert.ok(proxied instanceof FetchHttpClient);
  proxied.close();
  const traced = upstreamClient(env({ OTEL_DENO: "1" }));
  assert.ok(traced instanceof FetchHttpClient);
  traced.close();
});
