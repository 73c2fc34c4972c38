/** Key budgets and model prices (DESIGN §4.1, §8) over a real port. */
import assert from "node:assert/strict";
import { readUsage } from "../src/log/usage.ts";
import { eventually } from "./support/eventually.ts";
import { startServer, testConfig } from "./support/server.ts";

/** sim-chat at 1,000 currency units per million tokens (0.001 a token), slow enough that
 * requests overlap. */
function pricedConfig() {
  return testConfig((raw) => {
    raw.providers = [{ id: "sim", style: "simulator", token_delay_ms: 20 }];
    const models = raw.models as Record<string, unknown>[];
    models[0]!.pricing = { input: 1000, output: 1000 };
  });
}

Deno.test("budget: a request that could pass the budget is refused; the running stream finishes; spend settles to the cost", async () => {
  await using server = await startServer({ config: pricedConfig() });
  const { key, record } = await server.app.services.keys.create({
    name: "budgeted",
    budget: { per_day: 1 },
  });
  const chat = (max_tokens: number, stream: boolean) =>
    fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({
        model: "sim-chat",
        stream,
        stream_options: stream ? { include_usage: true } : undefined,
        max_tokens,
        messages: [{ role: "user", content: "Tell me a story." }],
      }),
    });
  // Its worst case (prompt estimate + 600 output tokens) is about 0.62 of the 1.00 budget.
  const running = await chat(600, true);
  assert.equal(running.status, 200);
  const refused = await chat(600, false);
  assert.equal(refused.status, 429);
  assert.ok(Number(refused.headers.get("retry-after")) >= 1);
  const error = (await refused.json()).error;
  assert.equal(error.code, "insufficient_quota");
  assert.match(error.message, /Budget reached: this API key may spend 1 per day/);
  // The running stream is not cut.
  const text = await running.text();
  assert.match(text, /data: \[DONE\]/);
  const usage = JSON.parse(
    text.split("\n").filter((l) => l.startsWith("data: {")).map((l) => l.slice(6)).at(-1)!,
  ).usage;
  const cost = (usage.prompt_tokens + usage.completion_tokens) * 1000;
  const spend = await eventually(async () => {
    const entry = await server.kv.get<number[]>(["spend", record.id]);
    return entry.value?.[1] === cost ? entry.value : undefined;
  }, "spend settled to the stream's cost");
  assert.equal(spend[3], cost);
  // The log and the usage report show the cost.
  await server.app.services.logger.flush();
  const logged = server.output.records().find((r) => r.status === 200 && r.stream === true)!;
  assert.equal(logged.cost, cost / 1_000_000);
  // The refusal is logged with the model it was priced at.
  const refusal = server.output.records().find((r) => r.status === 429)!;
  assert.equal(refusal.model, "sim-chat");
  const day = new Date(server.clock.now()).toISOString().slice(0, 10);
  const rows = await readUsage(server.kv, day);
  const row = rows.find((r) => r.key_id === record.id && r.model === "sim-chat");
  assert.equal(row?.cost_micros, cost);
});

Deno.test("budget: free models and keys without a budget reserve nothing", async () => {
  await using server = await startServer({ config: pricedConfig() });
  const { key, record } = await server.app.services.keys.create({
    name: "b",
    budget: { per_day: 0 },
  });
  // sim-vision has no pricing: free, so a zero budget does not stop it.
  const free = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: "sim-vision", messages: [{ role: "user", content: "hi" }] }),
  });
  assert.equal(free.status, 200);
  await free.body?.cancel();
  assert.equal((await server.kv.get(["spend", record.id])).value, null);
});

Deno.test("budget and pricing: bad values name the field", () => {
  assert.throws(
    () =>
      testConfig((raw) => {
        (raw.models as Record<string, unknown>[])[0]!.pricing = { input: -1, output: 1 };
      }),
    /models\[0\]\.pricing\.input/,
  );
  assert.throws(
    () =>
      testConfig((raw) => {
        (raw.models as Record<string, unknown>[])[0]!.pricing = { input: 1 };
      }),
    /models\[0\]\.pricing\.output/,
  );
});

Deno.test("budget: embeddings reserve their input tokens and settle to the cost of the tokens the model counted", async () => {
  await using server = await startServer({
    config: testConfig((raw) => {
      (raw.models as Record<string, unknown>[]).push({
        id: "sim-embed",
        provider: "sim",
        embeddings: true,
        pricing: { input: 1000, output: 0 },
      });
    }),
  });
  const { key, record } = await server.app.services.keys.create({
    name: "budgeted",
    budget: { per_day: 0.05 },
  });
  const embed = (input: string[]) =>
    fetch(`${server.url}/v1/embeddings`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: "sim-embed", input }),
    });
  const ok = await embed(["a few words to embed", "and a few more"]);
  assert.equal(ok.status, 200);
  const tokens = (await ok.json()).usage.prompt_tokens as number;
  assert.ok(tokens > 0);
  const spend = await eventually(async () => {
    const entry = await server.kv.get<number[]>(["spend", record.id]);
    return entry.value?.[1] === tokens * 1000 ? entry.value : undefined;
  }, "spend settled to the embeddings' cost");
  assert.equal(spend[1], tokens * 1000);
  // 50,000 micros of budget left at 1,000 a token: a batch whose estimate passes it is refused
  // before the model is called.
  const refused = await embed(Array.from({ length: 100 }, () => "word ".repeat(200)));
  assert.equal(refused.status, 429);
  assert.equal((await refused.json()).error.code, "insufficient_quota");
});
