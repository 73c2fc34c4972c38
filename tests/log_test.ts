import assert from "node:assert/strict";
import { LOG_PREFIX, logBucket, logRows } from "../src/log/kv_sink.ts";
import { readUsage } from "../src/log/usage.ts";
import { startServer } from "./support/server.ts";

const FIELDS = [
  "ts",
  "request_id",
  "method",
  "path",
  "status",
  "ms",
  "ip",
  "key_id",
  "model",
  "provider",
  "prompt_tokens",
  "completion_tokens",
  "error",
];

Deno.test("one JSON line per request on stdout with every field", async () => {
  await using server = await startServer();
  const ok = await fetch(`${server.url}/v1/models`);
  await ok.body?.cancel();
  const missing = await fetch(`${server.url}/missing`);
  await missing.body?.cancel();
  await server.app.services.logger.flush();
  const lines = server.output.out.trimEnd().split("\n");
  assert.equal(lines.length, 2);
  const [first, second] = lines.map((l) => JSON.parse(l));
  for (const field of FIELDS) assert.ok(field in first, `missing ${field}`);
  assert.equal(first.request_id, ok.headers.get("x-request-id"));
  assert.equal(first.method, "GET");
  assert.equal(first.path, "/v1/models");
  assert.equal(first.status, 200);
  assert.equal(typeof first.ms, "number");
  assert.ok(first.ms >= 0);
  assert.equal(first.ip, "127.0.0.1");
  assert.equal(first.key_id, null);
  assert.equal(first.error, null);
  assert.equal(first.ts, new Date(server.clock.now()).toISOString());
  assert.equal(second.status, 404);
  assert.equal(second.error, "unknown_url");
});

Deno.test("a key's id is logged, never its value nor any Authorization header", async () => {
  await using server = await startServer();
  const { key, record } = await server.app.services.keys.create({ name: "logged" });
  const withKey = await fetch(`${server.url}/v1/models`, {
    headers: { authorization: `Bearer ${key}` },
  });
  await withKey.body?.cancel();
  const wrong = "sk-sy-" + "Z".repeat(32);
  const bad = await fetch(`${server.url}/v1/models`, {
    headers: { authorization: `Bearer ${wrong}` },
  });
  assert.equal(bad.status, 401);
  const badBody = await bad.text();
  assert.ok(!badBody.includes(wrong));
  const malformed = await fetch(`${server.url}/v1/models`, {
    headers: { authorization: "Basic dXNlcjpzZWNyZXQtcGFzc3dvcmQ=" },
  });
  assert.equal(malformed.status, 401);
  await malformed.body?.cancel();
  await server.app.services.logger.flush();
  const records = server.output.records();
  assert.equal(records.length, 3);
  assert.equal(records[0]!.key_id, record.id);
  assert.equal(records[1]!.error, "invalid_api_key");
  const everything = server.output.out + server.output.err +
    JSON.stringify(await Array.fromAsync(logRows(server.kv.list({ prefix: [...LOG_PREFIX] }))));
  for (const secret of [key, wrong, "dXNlcjpzZWNyZXQtcGFzc3dvcmQ=", "Bearer"]) {
    assert.ok(!everything.includes(secret), `a log contains ${secret}`);
  }
});

Deno.test("the same records are kept in KV, in rows per arrival second, written in batches", async () => {
  await using server = await startServer();
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${server.url}/healthz`);
    await res.body?.cancel();
  }
  await server.app.services.logger.flush();
  const rows = await Array.fromAsync(logRows(server.kv.list({ prefix: [...LOG_PREFIX] })));
  assert.equal(rows.length, 1, "one flush of one second's records is one row");
  const records = rows.flatMap((row) => row.records);
  const byId = (a: Record<string, unknown>, b: Record<string, unknown>) =>
    String(a.request_id).localeCompare(String(b.request_id));
  assert.deepEqual(
    records.map((r) => ({ ...r }) as Record<string, unknown>).sort(byId),
    server.output.records().sort(byId),
  );
  for (const row of rows) {
    for (const record of row.records) {
      assert.equal(row.bucket, logBucket(Date.parse(record.ts)));
    }
  }
});

Deno.test("a 2,100-character model and a 60 KB path are logged bounded, and the 58 requests beside them are kept too", async () => {
  await using server = await startServer({ logFlushMs: 60_000 });
  const model = "x".repeat(2100);
  const chat = () =>
    fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
    });
  const requests = [
    chat(),
    fetch(`${server.url}/v1/${"p".repeat(60_000)}`),
    ...Array.from({ length: 58 }, () => fetch(`${server.url}/v1/models`)),
  ];
  const responses = await Promise.all(requests);
  for (const res of responses) await res.body?.cancel();
  assert.equal(responses[0]!.status, 404);
  assert.equal(responses[1]!.status, 404);
  await server.app.services.logger.flush();
  const rows = await Array.fromAsync(logRows(server.kv.list({ prefix: [...LOG_PREFIX] })));
  const records = rows.flatMap((row) => row.records);
  assert.equal(records.length, 60);
  const longModel = records.find((r) => r.model?.startsWith("xxx"))!;
  assert.equal(longModel.model!.length, 128);
  const longPath = records.find((r) => r.path.startsWith("/v1/ppp"))!;
  assert.equal(longPath.path.length, 256);
  assert.ok(longPath.path.endsWith("…[60004 chars]"));
  for (const line of server.output.out.trimEnd().split("\n")) assert.ok(line.length < 1000);
  const usage = await readUsage(server.kv, "2026-01-15");
  assert.deepEqual(
    usage.map((u) => [u.model, u.requests]).sort(),
    [[null, 59], [longModel.model, 1]],
  );
});
