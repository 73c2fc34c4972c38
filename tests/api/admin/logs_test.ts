import assert from "node:assert/strict";
import type { LogRecord } from "../../../src/log/record.ts";
import { admin, ADMIN_TOKEN, type JsonBody, startAdminServer } from "../../support/admin.ts";
import { makeLogRecord } from "../../support/log_records.ts";
import { systemClock } from "../../../src/clock.ts";
import { FakeClock, type TestServer } from "../../support/server.ts";

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);

async function request(server: TestServer, path: string, init: RequestInit = {}) {
  const res = await fetch(`${server.url}${path}`, init);
  await res.body?.cancel();
  return res.status;
}

/** Requests at known times: T0 anon models, T0+1s keyed models, T0+2s 11 anon chats without a model (400s; the
 * 11th refused), T0+3s keyed moderation. */
async function traffic(server: TestServer, clock: FakeClock): Promise<string> {
  const { key, record } = await server.app.services.keys.create({ name: "k" });
  const auth = { authorization: `Bearer ${key}` };
  await request(server, "/v1/models");
  clock.advance(1000);
  await request(server, "/v1/models", { headers: auth });
  clock.advance(1000);
  for (let i = 0; i < 11; i++) {
    await request(server, "/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
  }
  clock.advance(1000);
  await request(server, "/v1/moderations", {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ input: "x" }),
  });
  await server.app.services.logger.flush();
  return record.id;
}

async function logs(server: TestServer, query: string): Promise<JsonBody> {
  const res = await admin(server, "GET", `/admin/logs?${query}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

Deno.test("GET /admin/logs: records newest first, filtered by time, status, key, model, path", async () => {
  const clock = new FakeClock(T0);
  await using server = await startAdminServer({ clock });
  const keyId = await traffic(server, clock);
  const api = await logs(server, "path=/v1/chat/completions");
  assert.equal(api.data.length, 11);
  assert.equal(api.next_cursor, null);
  const all: LogRecord[] = (await logs(server, "")).data.filter((r: LogRecord) =>
    r.path.startsWith("/v1/")
  );
  assert.equal(all.length, 14);
  assert.deepEqual(
    all.map((r) => r.path),
    ["/v1/moderations", ...Array(11).fill("/v1/chat/completions"), "/v1/models", "/v1/models"],
  );
  for (let i = 1; i < all.length; i++) assert.ok(all[i - 1]!.ts >= all[i]!.ts);
  assert.ok(!("hash" in all[0]!) && !JSON.stringify(all).includes("sk-sy-"));

  assert.equal((await logs(server, "status=429")).data.length, 1);
  assert.equal((await logs(server, "status=429")).data[0].error, "rate_limit_exceeded");
  assert.equal((await logs(server, "status=4xx")).data.length, 11);
  const keyed = await logs(server, `key_id=${keyId}`);
  assert.deepEqual(keyed.data.map((r: LogRecord) => r.path), ["/v1/moderations", "/v1/models"]);
  assert.ok(
    (await logs(server, "key_id=anonymous&path=/v1/models")).data.every((r: LogRecord) =>
      r.key_id === null
    ),
  );
  // (A record's ts is when the request arrived: a hair before the fake clock's reading.)
  const since = await logs(server, `since=${new Date(T0 + 1500).toISOString()}&status=4xx`);
  assert.equal(since.data.length, 11);
  const until = await logs(server, `until=${T0 + 500}`);
  assert.deepEqual(until.data.map((r: LogRecord) => r.path), ["/v1/models"]);
  const window = await logs(server, `since=${T0 + 500}&until=${T0 + 1500}`);
  assert.deepEqual(window.data.map((r: LogRecord) => r.key_id), [keyId]);

  const record: LogRecord = {
    ts: new Date(T0 + 5000).toISOString(),
    request_id: "req_model",
    method: "POST",
    path: "/v1/chat/completions",
    status: 200,
    ms: 3,
    ip: "127.0.0.1",
    key_id: null,
    model: "sim-chat",
    provider: "sim",
    prompt_tokens: 1,
    completion_tokens: 2,
    error: null,
  };
  server.app.services.logger.request(record);
  await server.app.services.logger.flush();
  assert.deepEqual((await logs(server, "model=sim-chat")).data, [record]);
});

Deno.test("GET /admin/logs pages with limit and next_cursor", async () => {
  const clock = new FakeClock(T0);
  await using server = await startAdminServer({ clock });
  await traffic(server, clock);
  const seen: string[] = [];
  let query = "limit=4&path=/v1/chat/completions";
  for (let page = 0; page < 10; page++) {
    const body = await logs(server, query);
    assert.ok(body.data.length <= 4);
    seen.push(...body.data.map((r: LogRecord) => r.request_id));
    if (body.next_cursor === null) break;
    query = `limit=4&path=/v1/chat/completions&cursor=${encodeURIComponent(body.next_cursor)}`;
  }
  assert.equal(seen.length, 11);
  assert.equal(new Set(seen).size, 11);
});

Deno.test("GET /admin/logs: an empty range (since after until, a cursor before since) is an empty page", async () => {
  const clock = new FakeClock(T0);
  await using server = await startAdminServer({ clock });
  await traffic(server, clock);
  const empty = { object: "list", data: [], next_cursor: null };
  assert.deepEqual(await logs(server, `since=${T0 + 3000}&until=${T0}`), empty);
  assert.deepEqual(await logs(server, `since=${T0 + 1000}&until=${T0 + 1000}`), empty);
  const first = await logs(server, "limit=2");
  assert.notEqual(first.next_cursor, null);
  const cursor = encodeURIComponent(first.next_cursor);
  assert.deepEqual(await logs(server, `limit=2&cursor=${cursor}&since=${T0 + 60_000}`), empty);
});

Deno.test("GET /admin/logs pages newest first across rows of one second and across seconds", async () => {
  await using server = await startAdminServer();
  const logger = server.app.services.logger;
  const base = makeLogRecord({ method: "GET", path: "/v1/models", model: null, provider: null });
  // Three flushes: seconds T0 and T0+1s, then late records of second T0 (a second row there).
  const plan = [[0, 10, 250], [1000, 5, 100], [0, 7, 1]] as const;
  let n = 0;
  for (const [second, count, step] of plan) {
    for (let i = 0; i < count; i++) {
      const id = `req_${String(n++).padStart(3, "0")}`;
      logger.request({
        ...base,
        ts: new Date(T0 + second + i * step % 1000).toISOString(),
        request_id: id,
      });
    }
    await logger.flush();
  }
  const expected = (await logs(server, "limit=1000&path=/v1/models")).data as LogRecord[];
  assert.equal(expected.length, 22);
  for (let i = 1; i < expected.length; i++) {
    assert.ok(expected[i - 1]!.ts >= expected[i]!.ts, "newest first");
  }
  for (const size of [1, 3, 7, 22]) {
    const seen: LogRecord[] = [];
    let query = `limit=${size}&path=/v1/models`;
    for (let page = 0; page < 30; page++) {
      const body = await logs(server, query);
      seen.push(...body.data);
      if (body.next_cursor === null) break;
      query = `limit=${size}&path=/v1/models&cursor=${encodeURIComponent(body.next_cursor)}`;
    }
    assert.deepEqual(
      seen.map((r) => r.request_id),
      expected.map((r) => r.request_id),
      `pages of ${size}`,
    );
  }
});

Deno.test("GET /admin/logs: bad parameters are 400s naming the parameter", async () => {
  await using server = await startAdminServer();
  const cases: [string, string][] = [
    ["since=yesterday", "since"],
    ["until=2026-99-99", "until"],
    ["status=abc", "status"],
    ["status=600", "status"],
    ["limit=0", "limit"],
    ["limit=1001", "limit"],
    ["limit=ten", "limit"],
    ["cursor=zzz!!", "cursor"],
    ["sort=asc", "sort"],
  ];
  for (const [query, param] of cases) {
    const res = await admin(server, "GET", `/admin/logs?${query}`);
    assert.equal(res.status, 400, query);
    assert.equal(res.body.error.param, param, query);
  }
});

/** Reads SSE text from `reader` until `done` accepts what arrived; returns it. Fails (rather
 * than waits for ever) when that has not happened within 20 s. */
async function readUntil(
  reader: ReadableStreamDefaultReader<string>,
  done: (text: string) => boolean,
): Promise<string> {
  let text = "";
  // One deadline for the whole wait, not one per read: the follower's keep-alive comments (every
  // 15 s) would otherwise extend a wait for records that never come for ever.
  const deadline = performance.now() + 20_000;
  while (!done(text)) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), Math.max(0, deadline - performance.now()));
    });
    const read = await Promise.race([reader.read(), late]);
    clearTimeout(timer);
    assert.ok(read !== "late", `after 20 s, no more than ${JSON.stringify(text)}`);
    assert.ok(!read.done, `the stream ended after ${JSON.stringify(text)}`);
    text += read.value;
  }
  return text;
}

/** The records of `data:` events in SSE text. */
const dataRecords = (text: string): LogRecord[] =>
  text.split("\n\n").filter((e) => e.startsWith("data: ")).map((e) => JSON.parse(e.slice(6)));

Deno.test("GET /admin/logs?follow=1: new records as SSE, filtered, from every app on the KV", async () => {
  // The real clock: following starts at the moment of the request.
  await using kv = await Deno.openKv(":memory:");
  await using server = await startAdminServer({ kv, clock: systemClock });
  await using other = await startAdminServer({ kv, clock: systemClock });
  const path = "/v1/models/sim-chat";
  const requestId = async (server: TestServer, path: string) => {
    const res = await fetch(`${server.url}${path}`);
    await res.body?.cancel();
    return res.headers.get("x-request-id");
  };
  await requestId(server, path);
  await server.app.services.logger.flush();
  // A client of its own, closed at the end, so that the follower's connection surely closes.
  using client = Deno.createHttpClient({});
  const res = await fetch(`${server.url}/admin/logs?follow=1&path=${path}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    client,
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  // Cancelled also when an assertion fails: an open follower would hold the servers' shutdown.
  try {
    const opening = await readUntil(reader, (t) => t.includes("\n\n"));
    assert.equal(opening, ": following the request log\n\n");
    const expected = [await requestId(server, path), await requestId(other, path)];
    await requestId(server, "/v1/models/elsewhere");
    const text = await readUntil(reader, (t) => dataRecords(t).length >= 2);
    const records = dataRecords(text);
    assert.deepEqual(records.map((r) => r.request_id).sort(), expected.sort());
    assert.ok(records.every((r) => r.path === path && r.status === 200));
  } finally {
    await reader.cancel();
  }
});

Deno.test("GET /admin/logs?follow=1: paging parameters and a wrong follow are 400s naming them", async () => {
  await using server = await startAdminServer();
  for (
    const [query, param] of [
      ["follow=1&limit=5", "limit"],
      ["follow=1&cursor=1.x", "cursor"],
      ["follow=true&since=0", "since"],
      ["follow=yes", "follow"],
    ] as const
  ) {
    const res = await admin(server, "GET", `/admin/logs?${query}`);
    assert.equal(res.status, 400, query);
    assert.equal(res.body.error.param, param);
  }
  const listed = await admin(server, "GET", "/admin/logs?follow=0");
  assert.equal(listed.status, 200);
  assert.equal(listed.body.object, "list");
});
