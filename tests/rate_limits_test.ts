/** Spec §8 (limits), row by row, over a real port. */
import assert from "node:assert/strict";
import { Logger } from "../src/log/logger.ts";
import { createProviders } from "../src/providers/registry.ts";
import type { Provider } from "../src/providers/types.ts";
import {
  CapturedOutput,
  FakeClock,
  startServer,
  testConfig,
  type TestServer,
} from "./support/server.ts";
import { FetchHttpClient } from "../src/http/client/fetch.ts";

const MINUTE = 60_000;
const CHAT = JSON.stringify({ model: "sim-chat", messages: [{ role: "user", content: "hi" }] });

/** The simulator, wrapped to count every call that reaches it and keep the signals it got. */
function countingProvider(): {
  provider: Provider;
  calls: () => number;
  signals: AbortSignal[];
} {
  const clock = new FakeClock();
  const sim = createProviders(testConfig(), {
    env: () => undefined,
    http: new FetchHttpClient(),
    clock,
    logger: new Logger({ clock, output: new CapturedOutput() }),
  }).get("sim")!;
  let calls = 0;
  const signals: AbortSignal[] = [];
  const provider = new Proxy(sim, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls++;
        for (const arg of args) {
          const signal = (arg as { signal?: unknown } | null)?.signal;
          if (signal instanceof AbortSignal) signals.push(signal);
        }
        return value.apply(target, args);
      };
    },
  });
  return { provider, calls: () => calls, signals };
}

async function chat(server: TestServer, init: { body?: string; headers?: HeadersInit } = {}) {
  const headers = new Headers(init.headers);
  headers.set("content-type", "application/json");
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers,
    body: init.body ?? CHAT,
  });
  const text = await res.text();
  return { res, text };
}

function limitHeaders(res: Response) {
  return {
    limit: res.headers.get("x-ratelimit-limit-requests"),
    remaining: res.headers.get("x-ratelimit-remaining-requests"),
    reset: res.headers.get("x-ratelimit-reset-requests"),
  };
}

Deno.test("§8.1: anonymous chat is 10 a minute per IP; the 11th is a 429 that reaches no provider", async () => {
  const { provider, calls } = countingProvider();
  const clock = new FakeClock(Date.UTC(2026, 0, 15, 12, 0, 0));
  await using server = await startServer({ clock, providers: new Map([["sim", provider]]) });
  let succeeded = 0;
  for (let i = 0; i < 10; i++) {
    const { res } = await chat(server);
    assert.notEqual(res.status, 429, `request ${i + 1}`);
    if (res.status === 200) succeeded++;
    assert.deepEqual(limitHeaders(res), { limit: "10", remaining: String(9 - i), reset: "1m0s" });
  }
  const { res, text } = await chat(server);
  assert.equal(res.status, 429);
  assert.deepEqual(limitHeaders(res), { limit: "10", remaining: "0", reset: "1m0s" });
  assert.equal(res.headers.get("retry-after"), "60");
  const body = JSON.parse(text);
  assert.equal(body.error.type, "rate_limit_error");
  assert.equal(body.error.code, "rate_limit_exceeded");
  assert.match(body.error.message, /10 per minute/);
  // The limit is checked before the body is read: broken JSON still gets the 429, not a 400.
  const broken = await chat(server, { body: "{not json" });
  assert.equal(broken.res.status, 429);
  assert.equal(calls(), succeeded, "a refused request reached the provider");
  // A second later the reset is a second closer; a minute later the window is new.
  clock.advance(1000);
  const later = await chat(server);
  assert.equal(later.res.status, 429);
  assert.equal(limitHeaders(later.res).reset, "59s");
  assert.equal(later.res.headers.get("retry-after"), "59");
  clock.advance(59_000);
  const next = await chat(server);
  assert.notEqual(next.res.status, 429);
  assert.equal(limitHeaders(next.res).remaining, "9");
  await server.app.services.logger.flush();
  const refusedRecord = server.output.records().find((r) => r.status === 429)!;
  assert.equal(refusedRecord.error, "rate_limit_exceeded");
  assert.equal(refusedRecord.provider, null);
});

Deno.test("§8.1: 500 a day is the daily cap; a new UTC day starts again", async () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 15, 23, 0, 0));
  await using server = await startServer({ clock });
  for (let i = 0; i < 10; i++) assert.notEqual((await chat(server)).res.status, 429);
  assert.equal((await chat(server)).res.status, 429);
  clock.advance(MINUTE);
  const again = await chat(server);
  assert.notEqual(again.res.status, 429);
  assert.equal(limitHeaders(again.res).remaining, "9");
  let sent = 11;
  while (sent < 500) {
    const { res } = await chat(server);
    if (res.status === 429) clock.advance(MINUTE);
    else sent++;
  }
  clock.advance(MINUTE);
  const { res } = await chat(server);
  assert.equal(res.status, 429);
  const untilMidnight = Date.UTC(2026, 0, 16) - clock.now();
  assert.equal(limitHeaders(res).limit, "500");
  assert.equal(limitHeaders(res).remaining, "0");
  assert.equal(res.headers.get("retry-after"), String(Math.ceil(untilMidnight / 1000)));
  clock.ms = Date.UTC(2026, 0, 16, 0, 0, 0);
  assert.notEqual((await chat(server)).res.status, 429);
});

Deno.test("§8.1: other endpoints are 50,000 a day per IP; health is not limited", async () => {
  await using server = await startServer();
  const res = await fetch(`${server.url}/v1/models`);
  await res.body?.cancel();
  assert.equal(res.status, 200);
  // The fake clock stands at 12:00 UTC: the day window resets in 12 hours.
  assert.deepEqual(limitHeaders(res), { limit: "50000", remaining: "49999", reset: "12h0m0s" });
  const moderation = await fetch(`${server.url}/v1/moderations`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ input: "hi" }),
  });
  await moderation.body?.cancel();
  assert.equal(limitHeaders(moderation).remaining, "49998");
  for (let i = 0; i < 20; i++) {
    const health = await fetch(`${server.url}/healthz`);
    await health.body?.cancel();
    assert.equal(health.status, 200);
    assert.equal(health.headers.get("x-ratelimit-limit-requests"), null);
  }
});

Deno.test("§8.1: the limit is per client IP (X-Forwarded-For only behind a trusted proxy)", async () => {
  await using server = await startServer({
    config: testConfig((raw) => {
      raw.server = { port: 0, hostname: "127.0.0.1", trust_proxy: true };
    }),
  });
  const from = (ip: string) => chat(server, { headers: { "x-forwarded-for": ip } });
  for (let i = 0; i < 10; i++) await from("198.51.100.1");
  assert.equal((await from("198.51.100.1")).res.status, 429);
  const other = await from("198.51.100.2");
  assert.notEqual(other.res.status, 429);
  assert.equal(limitHeaders(other.res).remaining, "9");
});

Deno.test("§8.2: image generation has its own limits", async () => {
  await using server = await startServer();
  const { key } = await server.app.services.keys.create({ name: "p", preview: true });
  const images = (authorization?: string) =>
    fetch(`${server.url}/v1/images/generations`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(authorization ? { authorization } : {}),
      },
      body: JSON.stringify({ model: "sim-image", prompt: "a cat" }),
    });
  for (let i = 0; i < 2; i++) {
    const res = await images();
    await res.body?.cancel();
    assert.notEqual(res.status, 429);
    assert.equal(limitHeaders(res).limit, "2");
  }
  const third = await images();
  await third.body?.cancel();
  assert.equal(third.status, 429);
  // Chat from the same IP is a different scope.
  assert.notEqual((await chat(server)).res.status, 429);
  // A key has the configured key limits for images: 10 a minute.
  const keyed = await images(`Bearer ${key}`);
  await keyed.body?.cancel();
  assert.notEqual(keyed.status, 429);
  assert.deepEqual(limitHeaders(keyed), { limit: "10", remaining: "9", reset: "1m0s" });
});

Deno.test("§8.3: keys have higher limits, counted per key, with per-key overrides", async () => {
  await using server = await startServer({
    config: testConfig((raw) => {
      raw.limits = { key: { chat: { per_minute: 20, per_day: 1000 } } };
    }),
  });
  const { keys } = server.app.services;
  const a = await keys.create({ name: "a" });
  const b = await keys.create({ name: "b", limits: { chat: { per_minute: 3 } } });
  for (let i = 0; i < 11; i++) await chat(server);
  assert.equal((await chat(server)).res.status, 429);
  const auth = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
  for (let i = 0; i < 20; i++) {
    const { res } = await chat(server, auth(a.key));
    assert.notEqual(res.status, 429, `key request ${i + 1}`);
    assert.equal(limitHeaders(res).limit, "20");
  }
  assert.equal((await chat(server, auth(a.key))).res.status, 429);
  for (let i = 0; i < 3; i++) {
    assert.notEqual((await chat(server, auth(b.key))).res.status, 429);
  }
  const over = await chat(server, auth(b.key));
  assert.equal(over.res.status, 429);
  assert.equal(limitHeaders(over.res).limit, "3");
  assert.match(JSON.parse(over.text).error.message, /for this API key/);
});

Deno.test("unknown paths, preflights, wrong methods and failed admin auth count against the per-IP other limit", async () => {
  const clock = new FakeClock();
  await using server = await startServer({
    clock,
    config: testConfig((raw) => {
      raw.limits = { anonymous: { other: { per_minute: 4, per_day: 1000 } } };
    }),
    env: (
      name,
    ) => (name === "SWITCHYARD_ADMIN_TOKEN" ? "admin-secret-token-0123456789abcdef" : undefined),
  });
  const statuses: number[] = [];
  const send = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${server.url}${path}`, init);
    await res.body?.cancel();
    statuses.push(res.status);
  };
  await send(`/${"x".repeat(60_000)}`);
  await send("/admin/keys", { headers: { authorization: "Bearer wrong" } });
  await send("/v1/models", {
    method: "OPTIONS",
    headers: { origin: "https://app.example.com", "access-control-request-method": "GET" },
  });
  await send("/v1/models", { method: "DELETE" });
  await send("/nowhere");
  await send("/admin/keys", { headers: { authorization: "Bearer wrong" } });
  assert.deepEqual(statuses, [404, 401, 204, 405, 429, 429]);
  // Health checks are never limited.
  const health = await fetch(`${server.url}/healthz`);
  assert.equal(health.status, 200);
  await health.body?.cancel();
});

Deno.test("§8.1 across instances: a request its instance counted far below the limit, refused after all, is stopped and answered 429", async () => {
  await using kv = await Deno.openKv(":memory:");
  const clock = new FakeClock(Date.UTC(2026, 0, 15, 12, 0, 0));
  const { provider, calls, signals } = countingProvider();
  await using a = await startServer({ kv, clock, providers: new Map([["sim", provider]]) });
  await using b = await startServer({ kv, clock });
  assert.equal((await chat(a)).res.status, 200);
  // Instance b takes the other 9 of the minute; a's copy still says 1 of 10, far below.
  for (let i = 0; i < 9; i++) assert.equal((await chat(b)).res.status, 200, `b's ${i + 1}`);
  const { res, text } = await chat(a);
  assert.equal(res.status, 429);
  assert.equal(JSON.parse(text).error.code, "rate_limit_exceeded");
  assert.deepEqual(limitHeaders(res), { limit: "10", remaining: "0", reset: "1m0s" });
  // Its work ran beside the count's commit (the provider was called) and was stopped.
  assert.equal(calls(), 2);
  assert.equal(signals.length, 2);
  assert.ok(signals[1]!.aborted, "the refused request's provider call was aborted");
  await a.app.services.logger.flush();
  const records = a.output.records();
  assert.deepEqual(records.map((r) => [r.status, r.error]), [[200, null], [
    429,
    "rate_limit_exceeded",
  ]]);
  // From then on a's requests are refused from memory, reaching no provider.
  assert.equal((await chat(a)).res.status, 429);
  assert.equal(calls(), 2);
});
