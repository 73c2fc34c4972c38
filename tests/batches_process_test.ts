/**
 * Batches survive their gateways: a gateway process killed mid-batch (SIGKILL: nothing saved on
 * the way out) and started again on the same KV finishes the batch, and two app instances on
 * one KV file share a batch's lines; either way every custom_id is in the results exactly once.
 */
import assert from "node:assert/strict";
import OpenAI from "npm:openai@7.55.0";
import { admin, ADMIN_TOKEN } from "./support/admin.ts";
import { startFakeAnthropic } from "./support/fake_anthropic.ts";
import { startFakeOpenAI } from "./support/fake_openai.ts";
import type { Fault } from "./support/fake_upstream.ts";
import { type GatewayProcess, startGatewayProcess } from "./support/gateway_process.ts";
import { GENEROUS_LIMITS } from "./support/limits.ts";
import { dataTempDir } from "./support/process.ts";
import { startServer, testConfig, type TestServer } from "./support/server.ts";
import {
  BATCH_MODELS,
  batchFile,
  createBatch,
  customId,
  ended,
  fileLines,
  waitFor,
} from "./batches/support.ts";

const LINES = 120;

/** Every upstream call of the fake takes a while, so that a batch is caught mid-way. */
const SLOW: Fault = { delayMs: 40 };

/** Asserts the finished batch has every line's result exactly once. */
async function assertExactlyOnce(openai: OpenAI, batch: OpenAI.Batch): Promise<void> {
  assert.equal(batch.status, "completed", JSON.stringify(batch));
  assert.equal(batch.request_counts?.total, LINES);
  assert.equal(
    (batch.request_counts?.completed ?? 0) + (batch.request_counts?.failed ?? 0),
    LINES,
  );
  const lines = [
    ...await fileLines(openai, batch.output_file_id),
    ...await fileLines(openai, batch.error_file_id),
  ];
  const ids = lines.map((l) => l.custom_id as string).sort();
  assert.deepEqual(ids, Array.from({ length: LINES }, (_, i) => customId(i)));
}

Deno.test("batches: a gateway killed mid-batch and started again finishes it, each line once", async () => {
  await using upstream = startFakeOpenAI();
  await using anthropic = startFakeAnthropic();
  upstream.faults = Array.from({ length: 10 * LINES }, () => SLOW);
  const dir = await dataTempDir();
  const options = {
    dir,
    env: { SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN },
    providers: [{ id: "sim", style: "simulator" }],
    models: [
      { id: "sim-chat", provider: "sim", chat_completions: true },
      ...BATCH_MODELS.filter((m) => m.id !== "oa-chat"),
    ],
    provider: { max_retries: 0 },
    config: { limits: GENEROUS_LIMITS },
  };
  let gateway: GatewayProcess | null = await startGatewayProcess(upstream, anthropic, options);
  try {
    const server = { url: gateway.url } as TestServer;
    const made = await admin(server, "POST", "/admin/keys", { name: "batch" });
    assert.equal(made.status, 201);
    const client = () =>
      new OpenAI({
        baseURL: `${gateway!.url}/v1`,
        apiKey: made.body.key,
        maxRetries: 0,
        timeout: 10_000,
      });
    const created = await createBatch(client(), batchFile(LINES));
    const midway = await waitFor(
      client(),
      created.id,
      (b) => (b.request_counts?.completed ?? 0) >= 10,
    );
    assert.ok(midway.request_counts!.completed < LINES, "killed before the batch ended");
    const stopped = await gateway.stop("SIGKILL");
    gateway = null;
    assert.notEqual(stopped.code, 0);

    gateway = await startGatewayProcess(upstream, anthropic, options);
    // The lines that were running when it was killed come back once KV's hold on them lapses
    // (about a minute for a local KV file).
    const done = await waitFor(client(), created.id, ended, 150_000);
    await assertExactlyOnce(client(), done);
  } finally {
    await gateway?.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("batches: two app instances on one KV file share a batch, each line once", async () => {
  await using upstream = startFakeOpenAI();
  upstream.faults = Array.from({ length: 10 * LINES }, () => SLOW);
  const dir = await dataTempDir();
  const kvs = [await Deno.openKv(`${dir}/kv.sqlite`), await Deno.openKv(`${dir}/kv.sqlite`)];
  const env: Record<string, string> = {
    SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN,
    OA_KEY: upstream.apiKey,
  };
  const config = testConfig((raw) => {
    raw.limits = GENEROUS_LIMITS;
    (raw.providers as unknown[]).push({
      id: "oa",
      style: "openai",
      base_url: `${upstream.url}/v1`,
      api_key_env: "OA_KEY",
      max_retries: 0,
    });
    (raw.models as unknown[]).push(...BATCH_MODELS);
  });
  const servers: TestServer[] = [];
  try {
    for (const kv of kvs) servers.push(await startServer({ kv, config, env: (n) => env[n] }));
    const made = await admin(servers[0]!, "POST", "/admin/keys", { name: "batch" });
    const openai = new OpenAI({
      baseURL: `${servers[1]!.url}/v1`,
      apiKey: made.body.key,
      maxRetries: 0,
      timeout: 10_000,
    });
    const created = await createBatch(openai, batchFile(LINES));
    // One instance stops mid-way (its waiting lines go back to the queue); the other finishes.
    const midway = await waitFor(
      openai,
      created.id,
      (b) => (b.request_counts?.completed ?? 0) >= 10,
    );
    assert.ok(midway.request_counts!.completed < LINES, "stopped before the batch ended");
    await servers[0]!.close();
    kvs[0]!.close();
    // Counted once it has closed: lines it was running when the batch was read log on the way out.
    const ranFirst = servers[0]!.output.records().filter((r) => r.batch_id === created.id).length;
    const done = await waitFor(openai, created.id, ended);
    await assertExactlyOnce(openai, done);
    const ranSecond = servers[1]!.output.records().filter((r) => r.batch_id === created.id).length;
    // Lines ran on both (a line whose result could not be written is run again, so there may
    // be more runs than lines).
    assert.ok(ranFirst + ranSecond >= LINES, `lines run per instance: ${ranFirst}, ${ranSecond}`);
  } finally {
    for (const server of servers) await server.close().catch(() => {});
    for (const kv of kvs) {
      try {
        kv.close();
      } catch { /* closed above */ }
    }
    await Deno.remove(dir, { recursive: true });
  }
});
