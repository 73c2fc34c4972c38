/**
 * Routing over a real port (issue #15): one model with routes to an OpenAI-style fake and an
 * Anthropic-style fake; failures that are not the caller's fault fall back to the next route
 * before the first byte, the client gets one clean answer and is told which route served.
 */
import assert from "node:assert/strict";
import parsePrometheus from "npm:parse-prometheus-text-format@1.1.1";
import { logRecord, openaiClient, postChat } from "./support/client.ts";
import type { FakeUpstream, Fault } from "./support/fake_upstream.ts";
import { STYLES } from "./support/provider_styles.ts";
import { FakeClock, startServer, testConfig, type TestServer } from "./support/server.ts";

interface Routed extends AsyncDisposable {
  server: TestServer;
  first: FakeUpstream;
  second: FakeUpstream;
  clock: FakeClock;
}

/** A gateway whose model `routed` tries the OpenAI fake, then the Anthropic fake (the random
 * source always picks the first of equal weights). */
async function routedGateway(): Promise<Routed> {
  const first = STYLES[0]!.start();
  const second = STYLES[1]!.start();
  const clock = new FakeClock();
  const server = await startServer({
    clock,
    random: () => 0,
    config: testConfig((raw) => {
      (raw.providers as unknown[]).push(
        {
          id: "one",
          style: "openai",
          base_url: STYLES[0]!.baseUrl(first.url),
          api_key_env: "ONE_KEY",
          max_retries: 0,
          timeout_ms: 500,
        },
        {
          id: "two",
          style: "anthropic",
          base_url: STYLES[1]!.baseUrl(second.url),
          api_key_env: "TWO_KEY",
          max_retries: 0,
        },
      );
      (raw.models as unknown[]).push({
        id: "routed",
        chat_completions: true,
        routes: [
          { provider: "one", upstream_model: "gpt-up" },
          { provider: "two", upstream_model: "claude-up" },
        ],
      });
    }),
    env: (name) =>
      name === "ONE_KEY"
        ? first.apiKey
        : name === "TWO_KEY"
        ? second.apiKey
        : name === "SWITCHYARD_METRICS_TOKEN"
        ? METRICS_TOKEN
        : undefined,
  });
  return {
    server,
    first,
    second,
    clock,
    async [Symbol.asyncDispose]() {
      await server.close();
      await first.close();
      await second.close();
    },
  };
}

const METRICS_TOKEN = "routing-test-metrics-token";

/** The samples of `name` on the gateway's /metrics, as [labels, value] pairs. */
async function scraped(
  server: TestServer,
  name: string,
): Promise<[Record<string, string>, number][]> {
  const res = await fetch(`${server.url}/metrics`, {
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  });
  assert.equal(res.status, 200);
  const family = parsePrometheus(await res.text()).find((f: { name: string }) => f.name === name);
  return (family?.metrics ?? []).map((m: { labels?: Record<string, string>; value: string }) => [
    m.labels ?? {},
    Number(m.value),
  ]);
}

const HELLO = { model: "routed", messages: [{ role: "user" as const, content: "hello" }] };

for (
  const [what, fault] of [
    ["529 overloaded", { status: 529, errorType: "overloaded_error" }],
    ["500", { status: 500 }],
    ["429", { status: 429 }],
    ["a timeout", { delayMs: 2000 }],
    ["garbage", { garbage: "<html>bad gateway</html>" }],
  ] as [string, Fault][]
) {
  Deno.test(`routing: ${what} from the first route falls back; one clean answer names the route`, async () => {
    await using g = await routedGateway();
    g.first.faults = [fault];
    const res = await postChat(g.server, HELLO);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-switchyard-route"), "two/claude-up");
    const body = await res.json();
    assert.equal(body.model, "routed");
    assert.equal(typeof body.choices[0].message.content, "string");
    assert.equal(g.first.received.length, 1);
    assert.equal(g.second.received.length, 1);
    assert.equal((g.second.last.body as { model: string }).model, "claude-up");
    const record = await logRecord(g.server, res.headers.get("x-request-id"));
    assert.equal(record.provider, "two");
    assert.equal(record.status, 200);
  });
}

Deno.test("routing: a healthy first route serves, and says so", async () => {
  await using g = await routedGateway();
  const res = await postChat(g.server, HELLO);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("x-switchyard-route"), "one/gpt-up");
  await res.body?.cancel();
  assert.equal(g.second.received.length, 0);
});

Deno.test("routing: a caller's error (400) is not retried on another route", async () => {
  await using g = await routedGateway();
  g.first.faults = [{ status: 400, errorType: "invalid_request_error", message: "bad thing" }];
  const res = await postChat(g.server, HELLO);
  assert.equal(res.status, 400);
  await res.body?.cancel();
  assert.equal(g.second.received.length, 0);
});

Deno.test("routing: a stream falls back before its first byte; cut after it, it ends with the error event", async () => {
  await using g = await routedGateway();
  const client = openaiClient(g.server);
  g.first.faults = [{ status: 503 }];
  let text = "";
  const stream = await client.chat.completions.create({ ...HELLO, stream: true });
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
  assert.ok(text.length > 0);
  assert.equal(g.second.received.length, 1);
  // Cut mid-way on the route that serves: no second route, the client sees the error event.
  g.first.faults = [{ breakAfterEvents: 2 }];
  const cut = await postChat(g.server, { ...HELLO, stream: true });
  assert.equal(cut.status, 200);
  const events = await cut.text();
  assert.match(events, /"error"/);
  assert.doesNotMatch(events, /\[DONE\]/);
  assert.equal(g.second.received.length, 1);
});

Deno.test("routing: a breaker opens after 5 failures, skips the route, probes after 30 s and closes", async () => {
  await using g = await routedGateway();
  g.first.faults = Array.from({ length: 5 }, () => ({ status: 500 }));
  for (let i = 0; i < 5; i++) {
    const res = await postChat(g.server, HELLO);
    assert.equal(res.status, 200);
    await res.body?.cancel();
  }
  assert.equal(g.first.received.length, 5);
  // Open: the first route is not tried at all.
  for (let i = 0; i < 3; i++) {
    const res = await postChat(g.server, HELLO);
    assert.equal(res.headers.get("x-switchyard-route"), "two/claude-up");
    await res.body?.cancel();
  }
  assert.equal(g.first.received.length, 5);
  const routes = g.server.app.services.routes.stats();
  assert.equal(routes.find((r) => r.provider === "one")?.state, "open");
  // After the cooldown one request probes it; it answers, so the breaker closes.
  g.clock.advance(30_000);
  const probe = await postChat(g.server, HELLO);
  assert.equal(probe.headers.get("x-switchyard-route"), "one/gpt-up");
  await probe.body?.cancel();
  assert.equal(
    g.server.app.services.routes.stats().find((r) => r.provider === "one")?.state,
    "closed",
  );
});

Deno.test("routing: streams that break mid-way count toward the breaker; one that ends well closes it", async () => {
  await using g = await routedGateway();
  const state = () => g.server.app.services.routes.stats().find((r) => r.provider === "one");
  g.first.faults = Array.from({ length: 5 }, () => ({ breakAfterEvents: 2 }));
  for (let i = 0; i < 5; i++) {
    const cut = await postChat(g.server, { ...HELLO, stream: true });
    assert.equal(cut.headers.get("x-switchyard-route"), "one/gpt-up");
    assert.doesNotMatch(await cut.text(), /\[DONE\]/);
  }
  assert.equal(state()?.state, "open");
  const skipped = await postChat(g.server, { ...HELLO, stream: true });
  assert.equal(skipped.headers.get("x-switchyard-route"), "two/claude-up");
  await skipped.body?.cancel();
  // The probe after the cooldown streams to its end: the breaker closes then.
  g.clock.advance(30_000);
  const probe = await postChat(g.server, { ...HELLO, stream: true });
  assert.equal(probe.headers.get("x-switchyard-route"), "one/gpt-up");
  assert.match(await probe.text(), /\[DONE\]/);
  assert.equal(state()?.state, "closed");
});

Deno.test("routing: config errors name the field", () => {
  const bad = (model: Record<string, unknown>) => () =>
    testConfig((raw) => {
      (raw.models as unknown[]).push({ id: "r", chat_completions: true, ...model });
    });
  assert.throws(
    bad({ provider: "sim", routes: [{ provider: "sim" }] }),
    /models\[5\]\.routes: .*either provider/,
  );
  assert.throws(bad({ routes: [] }), /models\[5\]\.routes/);
  assert.throws(bad({ routes: [{ provider: "nope" }] }), /models\[5\]\.routes\[0\]\.provider/);
  assert.throws(
    bad({ routes: [{ provider: "sim", weight: 0 }] }),
    /models\[5\]\.routes\[0\]\.weight/,
  );
});

Deno.test("routing: PATCH and PUT of a model with routes keep its routes; a PATCH may swap them for a provider", async () => {
  const { admin, startAdminServer } = await import("./support/admin.ts");
  await using server = await startAdminServer({
    config: testConfig((raw) => {
      (raw.models as unknown[]).push({
        id: "two-ways",
        chat_completions: true,
        routes: [{ provider: "sim", upstream_model: "a" }, { provider: "sim", weight: 2 }],
      });
    }),
  });
  const patched = await admin(server, "PATCH", "/admin/models/two-ways", { enabled: false });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  assert.equal(patched.body.enabled, false);
  assert.equal(patched.body.routes.length, 2);
  const back = await admin(server, "PATCH", "/admin/models/two-ways", {
    provider: "sim",
    upstream_model: "b",
  });
  assert.equal(back.status, 200, JSON.stringify(back.body));
  assert.equal(back.body.routes, undefined);
  assert.equal(back.body.upstream_model, "b");
});

Deno.test("routing: /metrics counts each route moved past by its provider and error, and the answer's request once", async () => {
  await using g = await routedGateway();
  g.first.faults = [{ status: 500 }, { status: 529, errorType: "overloaded_error" }];
  for (let i = 0; i < 2; i++) assert.equal((await postChat(g.server, HELLO)).status, 200);
  // Both routes failing: the last one's error is the answer (an upstream error), not a fallback.
  g.first.faults = [{ status: 500 }];
  g.second.faults = [{ status: 500 }];
  assert.equal((await postChat(g.server, HELLO)).status, 502);
  assert.deepEqual(await scraped(g.server, "switchyard_route_fallbacks_total"), [
    [{ model: "routed", provider: "one", kind: "upstream_error" }, 2],
    [{ model: "routed", provider: "one", kind: "upstream_overloaded" }, 1],
  ]);
  assert.deepEqual(await scraped(g.server, "switchyard_upstream_errors_total"), [
    [{ provider: "two", kind: "upstream_error" }, 1],
  ]);
});
