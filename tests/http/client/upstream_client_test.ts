import assert from "node:assert/strict";
import { createApp } from "../../../src/app.ts";
import { FetchHttpClient } from "../../../src/http/client/fetch.ts";
import { NativeHttpClient } from "../../../src/http/client/native.ts";
import { fetchReason, upstreamClient } from "../../../src/http/client/upstream_client.ts";
import { CapturedOutput, testConfig } from "../../support/server.ts";

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

Deno.test("fetchReason: Deno's tracing on asks for fetch, a proxy first", () => {
  for (const value of ["true", "TRUE", "True"]) {
    assert.equal(fetchReason(env({ OTEL_DENO: value })), "OTEL_DENO is on", value);
  }
  // Deno itself takes only true or false: with these its telemetry is off.
  for (const value of ["false", "0", "1", "", "yes", "on"]) {
    assert.equal(fetchReason(env({ OTEL_DENO: value })), null, JSON.stringify(value));
  }
  assert.equal(fetchReason(env({ OTEL_DENO: "true", OTEL_DENO_TRACING: "false" })), null);
  assert.equal(fetchReason(env({ OTEL_DENO_TRACING: "true" })), "OTEL_DENO is on");
  assert.equal(fetchReason(env({ OTEL_DENO: "true", OTEL_SDK_DISABLED: "true" })), null);
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
  const traced = upstreamClient(env({ OTEL_DENO: "true" }));
  assert.ok(traced instanceof FetchHttpClient);
  traced.close();
});

Deno.test("SWITCHYARD_HTTP_CLIENT=fetch forces fetch, before any other reason; native is the default", () => {
  assert.equal(
    fetchReason(env({ SWITCHYARD_HTTP_CLIENT: "fetch" })),
    "SWITCHYARD_HTTP_CLIENT is fetch",
  );
  assert.equal(
    fetchReason(env({ SWITCHYARD_HTTP_CLIENT: "fetch", HTTPS_PROXY: "http://p.test" })),
    "SWITCHYARD_HTTP_CLIENT is fetch",
  );
  const forced = upstreamClient(env({ SWITCHYARD_HTTP_CLIENT: "fetch" }));
  assert.ok(forced instanceof FetchHttpClient);
  forced.close();
  for (const value of ["native", ""]) {
    assert.equal(fetchReason(env({ SWITCHYARD_HTTP_CLIENT: value })), null, JSON.stringify(value));
    const own = upstreamClient(env({ SWITCHYARD_HTTP_CLIENT: value }));
    assert.ok(own instanceof NativeHttpClient);
    own.close();
  }
  assert.equal(
    fetchReason(env({ SWITCHYARD_HTTP_CLIENT: "native", HTTP_PROXY: "http://p.test" })),
    "HTTP_PROXY is set",
    "the native client cannot go through a proxy: native is the default, not a veto",
  );
});

Deno.test("SWITCHYARD_HTTP_CLIENT with any other value is an error naming the variable", () => {
  for (const value of ["Fetch", "NATIVE", "undici", "fetch ", "1"]) {
    const vars = env({ SWITCHYARD_HTTP_CLIENT: value });
    assert.throws(() => fetchReason(vars), (e: unknown) => {
      assert.ok(e instanceof RangeError);
      assert.equal(
        e.message,
        `SWITCHYARD_HTTP_CLIENT must be "native" or "fetch", not ${JSON.stringify(value)}`,
      );
      return true;
    });
    assert.throws(() => upstreamClient(vars), /SWITCHYARD_HTTP_CLIENT must be/);
  }
});

Deno.test("createApp says at start that SWITCHYARD_HTTP_CLIENT=fetch sends upstream calls through fetch", async () => {
  await using kv = await Deno.openKv(":memory:");
  const output = new CapturedOutput();
  const app = await createApp({
    config: testConfig(),
    kv,
    env: env({ SWITCHYARD_HTTP_CLIENT: "fetch" }),
    output,
    seed: false,
  });
  await app.close();
  const said = output.out + output.err;
  assert.match(said, /SWITCHYARD_HTTP_CLIENT is fetch: upstream calls go through fetch/);
});

Deno.test("createApp refuses to start on a SWITCHYARD_HTTP_CLIENT it does not know", async () => {
  await using kv = await Deno.openKv(":memory:");
  const output = new CapturedOutput();
  await assert.rejects(
    createApp({
      config: testConfig(),
      kv,
      env: env({ SWITCHYARD_HTTP_CLIENT: "curl" }),
      output,
      seed: false,
    }),
    {
      name: "RangeError",
      message: 'SWITCHYARD_HTTP_CLIENT must be "native" or "fetch", not "curl"',
    },
  );
});
