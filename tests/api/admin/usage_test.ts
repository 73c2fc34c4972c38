import assert from "node:assert/strict";
import type { GuardrailVerdict } from "../../../src/guardrails/report.ts";
import type { LogRecord } from "../../../src/log/record.ts";
import { admin, startAdminServer } from "../../support/admin.ts";
import { FakeClock } from "../../support/server.ts";
import { makeLogRecord } from "../../support/log_records.ts";

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);

function record(fields: Partial<LogRecord>): LogRecord {
  return makeLogRecord(fields, T0);
}

Deno.test("GET /admin/usage: requests, errors and tokens per key and model for a UTC day", async () => {
  await using server = await startAdminServer({ clock: new FakeClock(T0) });
  const { logger, keys } = server.app.services;
  const { key, record: k } = await keys.create({ name: "team" });
  for (const authorization of [undefined, undefined, `Bearer ${key}`]) {
    const res = await fetch(`${server.url}/v1/models`, {
      headers: authorization ? { authorization } : {},
    });
    await res.body?.cancel();
  }
  await admin(server, "GET", "/admin/keys");
  logger.request(record({ key_id: k.id, prompt_tokens: 10, completion_tokens: 5 }));
  logger.request(record({ key_id: k.id, prompt_tokens: 10, completion_tokens: 5 }));
  logger.request(record({ key_id: k.id, status: 502, error: "upstream_error" }));
  logger.request(record({ prompt_tokens: 3, completion_tokens: 4 }));
  logger.request(record({ ts: new Date(T0 - 86_400_000).toISOString(), prompt_tokens: 7 }));
  await logger.flush();

  const res = await admin(server, "GET", "/admin/usage?day=2026-01-15");
  assert.equal(res.status, 200);
  const row = (
    key_id: string | null,
    key_name: string | null,
    model: string | null,
    r: number[],
  ) => ({
    key_id,
    key_name,
    model,
    requests: r[0],
    errors: r[1],
    prompt_tokens: r[2],
    completion_tokens: r[3],
    total_tokens: r[2]! + r[3]!,
    cost: 0,
  });
  assert.deepEqual(res.body, {
    object: "usage",
    day: "2026-01-15",
    data: [
      row(null, null, null, [2, 0, 0, 0]),
      row(null, null, "sim-chat", [1, 0, 3, 4]),
      row(k.id, "team", null, [1, 0, 0, 0]),
      row(k.id, "team", "sim-chat", [3, 1, 20, 10]),
    ],
    totals: {
      requests: 7,
      errors: 1,
      prompt_tokens: 23,
      completion_tokens: 14,
      total_tokens: 37,
      cost: 0,
    },
    models: [],
  });
  // Today (by the server's clock) is the default day; other days are separate.
  assert.deepEqual((await admin(server, "GET", "/admin/usage")).body.data, res.body.data);
  const before = await admin(server, "GET", "/admin/usage?day=2026-01-14");
  assert.deepEqual(before.body.data, [row(null, null, "sim-chat", [1, 0, 7, 0])]);
  assert.deepEqual((await admin(server, "GET", "/admin/usage?day=2025-01-01")).body.data, []);
});

Deno.test("usage counts every logged request exactly once, across batches", async () => {
  await using server = await startAdminServer({ clock: new FakeClock(T0) });
  const { logger } = server.app.services;
  for (let i = 0; i < 450; i++) {
    logger.request(record({
      model: `m${i % 3}`,
      prompt_tokens: 1,
      completion_tokens: 2,
      cache: i % 5 === 0 ? "miss" : "hit",
      guardrails: [{ name: "pii", stage: "input", verdict: "redacted", found: { email: 1 } }],
    }));
    if (i % 100 === 0) await new Promise((r) => setTimeout(r, 1));
  }
  await logger.flush();
  const res = await admin(server, "GET", "/admin/usage?day=2026-01-15");
  assert.deepEqual(res.body.data.map((r: { requests: number }) => r.requests), [150, 150, 150]);
  assert.equal(res.body.totals.prompt_tokens, 450);
  assert.equal(res.body.totals.completion_tokens, 900);
  for (const model of res.body.models) {
    assert.deepEqual(model.cache, { hits: 120, misses: 30, bypass: 0, hit_ratio: 0.8 });
    assert.equal(model.guardrails[0].redacted, 150);
    assert.deepEqual(model.guardrails[0].found, { email: 150 });
  }
});

Deno.test("GET /admin/usage: a bad day is a 400 naming day", async () => {
  await using server = await startAdminServer();
  for (const query of ["day=2026-02-30", "day=15-01-2026", "day=today", "day="]) {
    const res = await admin(server, "GET", `/admin/usage?${query}`);
    assert.equal(res.status, 400, query);
    assert.equal(res.body.error.param, "day");
  }
  const unknown = await admin(server, "GET", "/admin/usage?date=2026-01-15");
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.error.param, "date");
});

Deno.test("GET /admin/usage: per model, cache hits, misses and bypasses with the hit ratio, and guardrail verdicts with what they found", async () => {
  await using server = await startAdminServer({ clock: new FakeClock(T0) });
  const { logger } = server.app.services;
  const pii = (verdict: GuardrailVerdict["verdict"], found?: Record<string, number>) => ({
    name: "pii",
    stage: "input" as const,
    verdict,
    ...(found ? { found } : {}),
  });
  for (const cache of ["hit", "hit", "hit", "miss", "bypass"] as const) {
    logger.request(record({ model: "cached", cache }));
  }
  logger.request(record({ model: "guarded", guardrails: [pii("passed")] }));
  logger.request(record({ model: "guarded", guardrails: [pii("redacted", { email: 2 })] }));
  logger.request(
    record({ model: "guarded", guardrails: [pii("redacted", { email: 1, card: 1 })] }),
  );
  logger.request(record({
    model: "guarded",
    status: 400,
    error: "guardrail_blocked",
    guardrails: [pii("passed"), {
      name: "words",
      stage: "output",
      verdict: "blocked",
      found: { denied: 1 },
    }],
  }));
  logger.request(record({
    model: "guarded",
    cache: "miss",
    guardrails: [{ name: "hook", stage: "input", verdict: "failed_open" }],
  }));
  logger.request(record({
    model: "guarded",
    status: 503,
    error: "guardrail_unavailable",
    guardrails: [{ name: "hook", stage: "input", verdict: "failed_closed" }],
  }));
  logger.request(record({ model: "plain" }));
  // Another day's are counted on that day.
  logger.request(
    record({ ts: new Date(T0 - 86_400_000).toISOString(), model: "cached", cache: "hit" }),
  );
  await logger.flush();

  const res = await admin(server, "GET", "/admin/usage?day=2026-01-15");
  assert.equal(res.status, 200);
  const counts = (v: number[]) => ({
    passed: v[0],
    logged: v[1],
    redacted: v[2],
    blocked: v[3],
    failed_open: v[4],
    failed_closed: v[5],
    errors: v[4]! + v[5]!,
  });
  assert.deepEqual(res.body.models, [
    {
      model: "cached",
      cache: { hits: 3, misses: 1, bypass: 1, hit_ratio: 0.75 },
      guardrails: [],
    },
    {
      model: "guarded",
      cache: { hits: 0, misses: 1, bypass: 0, hit_ratio: 0 },
      guardrails: [
        { name: "hook", stage: "input", ...counts([0, 0, 0, 0, 1, 1]), found: {} },
        {
          name: "pii",
          stage: "input",
          ...counts([2, 0, 2, 0, 0, 0]),
          found: { card: 1, email: 3 },
        },
        { name: "words", stage: "output", ...counts([0, 0, 0, 1, 0, 0]), found: { denied: 1 } },
      ],
    },
  ]);
  const before = await admin(server, "GET", "/admin/usage?day=2026-01-14");
  assert.deepEqual(before.body.models, [
    { model: "cached", cache: { hits: 1, misses: 0, bypass: 0, hit_ratio: 1 }, guardrails: [] },
  ]);
});

Deno.test("GET /admin/usage: a model whose calls all bypassed the cache has no hit ratio", async () => {
  await using server = await startAdminServer({ clock: new FakeClock(T0) });
  const { logger } = server.app.services;
  logger.request(record({ cache: "bypass" }));
  logger.request(record({ cache: "bypass" }));
  await logger.flush();
  const res = await admin(server, "GET", "/admin/usage?day=2026-01-15");
  assert.deepEqual(res.body.models, [
    {
      model: "sim-chat",
      cache: { hits: 0, misses: 0, bypass: 2, hit_ratio: null },
      guardrails: [],
    },
  ]);
});

Deno.test("GET /admin/usage: a long found type (a webhook's reason) is counted under its bounded start", async () => {
  await using server = await startAdminServer({ clock: new FakeClock(T0) });
  const { logger } = server.app.services;
  const reason = "r".repeat(5000);
  for (let i = 0; i < 2; i++) {
    logger.request(record({
      guardrails: [{ name: "hook", stage: "output", verdict: "logged", found: { [reason]: 1 } }],
    }));
  }
  await logger.flush();
  const res = await admin(server, "GET", "/admin/usage?day=2026-01-15");
  const found = res.body.models[0].guardrails[0].found;
  assert.deepEqual(Object.values(found), [2]);
  assert.ok(Object.keys(found)[0]!.length <= 64);
  assert.equal(res.body.models[0].guardrails[0].logged, 2);
});

Deno.test("GET /admin/usage: the Gemini door's calls (/v1beta/...) count as usage; the admin API's do not", async () => {
  await using server = await startAdminServer({ clock: new FakeClock(T0) });
  const { logger } = server.app.services;
  logger.request(
    record({
      path: "/v1beta/models/sim-chat:generateContent",
      prompt_tokens: 4,
      completion_tokens: 2,
    }),
  );
  logger.request(record({ path: "/admin/keys", model: null }));
  await logger.flush();
  const res = await admin(server, "GET", "/admin/usage?day=2026-01-15");
  assert.equal(res.body.totals.requests, 1);
  assert.equal(res.body.totals.prompt_tokens, 4);
});
