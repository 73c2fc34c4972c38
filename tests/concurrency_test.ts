/** `max_concurrent` per key over a real port: the slot is held until the stream ends. */
import assert from "node:assert/strict";
import { eventually } from "./support/eventually.ts";
import { startServer, testConfig } from "./support/server.ts";

Deno.test("max_concurrent: the third of three streams at once is refused at once; a slot frees when a stream ends", async () => {
  const config = testConfig((raw) => {
    raw.providers = [{ id: "sim", style: "simulator", token_delay_ms: 30 }];
  });
  await using server = await startServer({ config });
  const { key } = await server.app.services.keys.create({ name: "capped", max_concurrent: 2 });
  const stream = () =>
    fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({
        model: "sim-chat",
        stream: true,
        max_tokens: 12,
        messages: [{ role: "user", content: "Tell me a short story." }],
      }),
    });
  const first = await Promise.all([stream(), stream()]);
  assert.deepEqual(first.map((r) => r.status), [200, 200]);
  const third = await stream();
  assert.equal(third.status, 429);
  assert.equal(third.headers.get("retry-after"), "1");
  const error = (await third.json()).error;
  assert.equal(error.code, "rate_limit_exceeded");
  assert.match(error.message, /may run 2 at once/);
  await first[0]!.text();
  // The first stream's settle gives its slot back.
  await eventually(async () => {
    const next = await stream();
    if (next.status !== 200) {
      await next.body?.cancel();
      return undefined;
    }
    await next.text();
    return true;
  }, "a free slot after a stream ended");
  await first[1]!.text();
});

Deno.test("max_concurrent: the admin API sets it and shows it; bad values name the field", async () => {
  const { readKeyFields, keyView } = await import("../src/auth/key_fields.ts");
  assert.deepEqual(readKeyFields({ name: "a", max_concurrent: 4 }, "create"), {
    name: "a",
    max_concurrent: 4,
  });
  assert.deepEqual(readKeyFields({ max_concurrent: null }, "update"), { max_concurrent: null });
  assert.throws(() => readKeyFields({ max_concurrent: 0 }, "update"), /max_concurrent/);
  await using server = await startServer();
  const { record } = await server.app.services.keys.create({ name: "b" });
  assert.equal(keyView(record).max_concurrent, null);
  const updated = await server.app.services.keys.update(record.id, { max_concurrent: 3 });
  assert.equal(keyView(updated!).max_concurrent, 3);
});

Deno.test("a stream cut by the shutdown gives its slot and the unused part of its reservation back before close resolves", async () => {
  const config = testConfig((raw) => {
    raw.providers = [{ id: "sim", style: "simulator", token_delay_ms: 50 }];
  });
  await using server = await startServer({ config });
  const { key, record } = await server.app.services.keys.create({
    name: "capped",
    max_concurrent: 1,
    limits: { chat: { tokens_per_minute: 100_000 } },
  });
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({
      model: "sim-chat",
      stream: true,
      max_tokens: 2000,
      messages: [{ role: "user", content: "Tell me a long story." }],
    }),
  });
  assert.equal(response.status, 200);
  const reader = response.body!.getReader();
  await reader.read();
  // What main.ts does once the grace period is over, the stream still open: the cut stream's
  // settle must be committed when it resolves, since the process exits right after.
  await server.app.close();
  const leases = await server.kv.get<Record<string, number>>(["leases", record.id]);
  assert.deepEqual(Object.keys(leases.value ?? {}), [], "no slot left held");
  const held = [];
  for await (const entry of server.kv.list<number[]>({ prefix: ["tokens"] })) {
    held.push(entry.value);
  }
  assert.equal(held.length, 1);
  // The reservation (the prompt's estimate and 2,000 output tokens) became what was streamed.
  assert.ok(held[0]![1]! < 500, `tokens counted: ${JSON.stringify(held[0])}`);
  await reader.cancel().catch(() => {});
});
