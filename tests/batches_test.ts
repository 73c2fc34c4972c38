/**
 * The Files and Batch APIs over a real port with the `openai` client, unchanged: a 200-line
 * batch of chat and embeddings lines on the simulator and an OpenAI-style fake (some lines
 * naming an unknown model, some meeting upstream failures that are retried) completes with one
 * result per line; cancelling stops a batch with partial results; files and batches are
 * invisible to other keys.
 */
import assert from "node:assert/strict";
import OpenAI from "npm:openai@7.55.0";
import { ADMIN_TOKEN, type JsonBody } from "./support/admin.ts";
import { startFakeOpenAI } from "./support/fake_openai.ts";
import type { FakeUpstream } from "./support/fake_upstream.ts";
import { rawHead } from "./support/http.ts";
import { GENEROUS_LIMITS } from "./support/limits.ts";
import { createKey } from "./support/sdk_gateway.ts";
import { type FakeClock, startServer, testConfig, type TestServer } from "./support/server.ts";
import {
  BATCH_MODELS,
  batchFile,
  chatLines,
  createBatch,
  customId,
  ended,
  fileLines,
  UNKNOWN_MODEL_EVERY,
  waitFor,
} from "./batches/support.ts";

/** A gateway over the simulator and `upstream` (as provider `oa`), admin API on. */
async function gateway(
  upstream: FakeUpstream,
  patch: (raw: Record<string, unknown>) => void = () => {},
): Promise<TestServer> {
  const env: Record<string, string> = {
    SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN,
    OA_KEY: upstream.apiKey,
  };
  return await startServer({
    env: (name) => env[name],
    config: testConfig((raw) => {
      raw.limits = GENEROUS_LIMITS;
      (raw.providers as unknown[]).push({
        id: "oa",
        style: "openai",
        base_url: `${upstream.url}/v1`,
        api_key_env: "OA_KEY",
        max_retries: 0,
      });
      (raw.models as unknown[]).push(...BATCH_MODELS);
      patch(raw);
    }),
  });
}

/** A config patch: the keys' chat limits are `chat`, the rest generous. */
function keyChatLimit(chat: Record<string, number>): (raw: Record<string, unknown>) => void {
  return (raw) => {
    raw.limits = { ...GENEROUS_LIMITS, key: { ...GENEROUS_LIMITS.key, chat } };
  };
}

function client(server: TestServer, apiKey: string): OpenAI {
  return new OpenAI({ baseURL: `${server.url}/v1`, apiKey, maxRetries: 0, timeout: 10_000 });
}

Deno.test("batches: 200 lines of chat and embeddings complete with one result per custom_id", async () => {
  await using upstream = startFakeOpenAI();
  // The first upstream calls fail (503, 429): their lines are tried again, not failed.
  upstream.faults = [{ status: 503 }, { status: 429, headers: { "retry-after": "0" } }, {
    status: 500,
  }];
  await using server = await gateway(upstream);
  const openai = client(server, await createKey(server));
  const created = await createBatch(openai, batchFile(200));
  assert.equal(created.object, "batch");
  assert.equal(created.status, "validating");
  assert.equal(created.completion_window, "24h");
  assert.deepEqual(created.metadata, { job: "test" });

  // The queue holds a window of line messages, not the whole batch: 8 messages of 10 lines are
  // queued ahead of the lines done (plus lines waiting for a retry, and what the two reads
  // below see at different moments), never the 200 of a batch queued whole, which slowed live
  // traffic.
  const store = server.app.services.batches.batches;
  let ahead = 0;
  let watching = true;
  const watch = (async () => {
    while (watching) {
      const [batch, counts] = await Promise.all([
        store.entry(created.id),
        store.counts(created.id),
      ]);
      if (batch.value !== null) ahead = Math.max(ahead, batch.value.queued - counts.done);
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  const done = await waitFor(openai, created.id, ended);
  watching = false;
  await watch;
  assert.ok(ahead > 0 && ahead <= 120, `lines queued ahead of those done: ${ahead}`);
  assert.equal(done.status, "completed", JSON.stringify(done));
  const unknown = Array.from({ length: 200 }, (_, i) => i).filter((i) =>
    i % UNKNOWN_MODEL_EVERY === UNKNOWN_MODEL_EVERY - 1
  );
  assert.deepEqual(done.request_counts, {
    total: 200,
    completed: 200 - unknown.length,
    failed: unknown.length,
  });
  for (const field of ["in_progress_at", "finalizing_at", "completed_at"] as const) {
    assert.equal(typeof done[field], "number", field);
  }

  const output = await fileLines(openai, done.output_file_id);
  const errors = await fileLines(openai, done.error_file_id);
  const ids = [...output, ...errors].map((l) => l.custom_id as string);
  assert.equal(ids.length, 200);
  assert.deepEqual(new Set(ids), new Set(Array.from({ length: 200 }, (_, i) => customId(i))));
  assert.deepEqual(
    errors.map((l) => l.custom_id).sort(),
    unknown.map(customId),
    "the unknown model's lines are in the error file",
  );
  for (const line of errors) {
    const response = line.response as { status_code: number; body: { error: { code: string } } };
    assert.equal(response.status_code, 404);
    assert.equal(response.body.error.code, "model_not_found");
  }
  for (const line of output) {
    assert.match(line.id as string, /^batch_req_/);
    const response = line.response as {
      status_code: number;
      request_id: string;
      body: JsonBody;
    };
    assert.equal(response.status_code, 200);
    assert.match(response.request_id, /^req_/);
    const body = response.body;
    assert.ok(
      body.object === "chat.completion" ? body.choices[0].message.content.length > 0 : (
        body.object === "list" && body.data[0].embedding.length > 0
      ),
      JSON.stringify(body).slice(0, 200),
    );
  }
  // The faults were met and retried: the fake saw more calls than it has lines.
  const oaLines = 200 / 2 - unknown.filter((i) => i % 4 >= 2).length;
  assert.equal(upstream.received.length, oaLines + 3);

  // Each line is in the request log with its batch's id.
  const records = server.output.records().filter((r) => r.batch_id === created.id);
  assert.equal(records.length, 200 + 3);

  // The metrics count the lines, and nothing is left in the queue.
  const metrics = await (await fetch(`${server.url}/metrics`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  })).text();
  assert.match(
    metrics,
    new RegExp(`switchyard_batch_lines_total\\{result="completed"\\} ${200 - unknown.length}\n`),
  );
  assert.match(
    metrics,
    new RegExp(`switchyard_batch_lines_total\\{result="failed"\\} ${unknown.length}\n`),
  );
  assert.match(metrics, /switchyard_batch_queue_depth 0\n/);

  // The admin API lists the batch with its progress.
  const res = await fetch(`${server.url}/admin/batches`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  const listed = await res.json();
  assert.equal(listed.data[0].id, created.id);
  assert.equal(listed.data[0].request_counts.total, 200);
});

Deno.test("batches: a bad input file is refused naming its bad lines", async () => {
  await using upstream = startFakeOpenAI();
  await using server = await gateway(upstream);
  const key = await createKey(server);
  const form = new FormData();
  form.set("purpose", "batch");
  const good = JSON.stringify({
    custom_id: "a",
    method: "POST",
    url: "/v1/chat/completions",
    body: { model: "sim-chat", messages: [] },
  });
  const text = [
    good,
    "{not json",
    JSON.stringify({ custom_id: "b", method: "GET", url: "/v1/chat/completions", body: {} }),
    good,
    JSON.stringify({ custom_id: "c", method: "POST", url: "/v1/images", body: {} }),
  ].join("\n");
  form.set("file", new File([text], "bad.jsonl"));
  const res = await fetch(`${server.url}/v1/files`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  assert.equal(res.status, 400);
  const { error } = await res.json();
  assert.equal(error.param, "file");
  assert.match(error.message, /4 invalid lines/);
  assert.match(error.message, /line 2: not valid JSON/);
  assert.match(error.message, /line 3: method/);
  assert.match(error.message, /line 4: custom_id "a" is used by an earlier line/);
  assert.match(error.message, /line 5: url/);
});

Deno.test("batches: a file upload that stalls is cut with 408 after server.body_timeout_ms", async () => {
  await using upstream = startFakeOpenAI();
  await using server = await gateway(upstream, (raw) => {
    raw.server = { ...(raw.server as Record<string, unknown>), body_timeout_ms: 300 };
  });
  const key = await createKey(server);
  const port = Number(new URL(server.url).port);
  const part = '--b\r\ncontent-disposition: form-data; name="purpose"\r\n\r\nbatch\r\n';
  const head = `POST /v1/files HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\n` +
    "content-type: multipart/form-data; boundary=b\r\ncontent-length: 100000\r\n\r\n";
  const started = Date.now();
  const text = await rawHead(port, head + part);
  assert.match(text, /^HTTP\/1\.1 408/, text);
  assert.ok(Date.now() - started < 5000, "cut at the body's time limit, not left hanging");
});

Deno.test("batches: cancel stops a batch; it ends cancelled with the results it had", async () => {
  await using upstream = startFakeOpenAI();
  // The key may make 10 chat calls a minute, so its batch may make 5 (limit_share 0.5): the
  // rest wait for the next minute, which the test's clock never reaches.
  await using server = await gateway(upstream, keyChatLimit({ per_minute: 10, per_day: 1000 }));
  const openai = client(server, await createKey(server));
  const created = await createBatch(openai, chatLines(20));
  const running = await waitFor(openai, created.id, (b) => (b.request_counts?.completed ?? 0) >= 5);
  assert.equal(running.status, "in_progress");
  // Live traffic keeps the rest of the key's limit.
  const live = await openai.chat.completions.create({
    model: "sim-chat",
    messages: [{ role: "user", content: "live" }],
  });
  assert.ok(live.choices[0]!.message.content);

  const cancelling = await openai.batches.cancel(created.id);
  assert.equal(cancelling.status, "cancelling");
  assert.equal(typeof cancelling.cancelling_at, "number");
  const cancelled = await waitFor(openai, created.id, ended);
  assert.equal(cancelled.status, "cancelled");
  assert.equal(typeof cancelled.cancelled_at, "number");
  assert.deepEqual(cancelled.request_counts, { total: 20, completed: 5, failed: 0 });
  const output = await fileLines(openai, cancelled.output_file_id);
  assert.equal(output.length, 5);
  assert.equal(cancelled.error_file_id, null);
  // Cancelling again changes nothing.
  assert.equal((await openai.batches.cancel(created.id)).status, "cancelled");
});

Deno.test("batches: a key sees only its own files and batches", async () => {
  await using upstream = startFakeOpenAI();
  await using server = await gateway(upstream);
  const owner = client(server, await createKey(server));
  const other = client(server, await createKey(server));
  const created = await createBatch(owner, batchFile(4));
  const done = await waitFor(owner, created.id, ended);
  assert.equal(done.status, "completed");

  await assert.rejects(other.batches.retrieve(created.id), OpenAI.NotFoundError);
  await assert.rejects(other.batches.cancel(created.id), OpenAI.NotFoundError);
  await assert.rejects(other.files.retrieve(created.input_file_id), OpenAI.NotFoundError);
  await assert.rejects(other.files.content(done.output_file_id!), OpenAI.NotFoundError);
  await assert.rejects(other.files.delete(created.input_file_id), OpenAI.NotFoundError);
  assert.deepEqual((await other.batches.list()).data, []);
  assert.deepEqual((await other.files.list()).data, []);

  // The owner lists both files (input, output) and the batch; pages by `after`.
  const files = (await owner.files.list()).data.map((f) => f.id);
  assert.deepEqual(new Set(files), new Set([created.input_file_id, done.output_file_id]));
  (server.clock as FakeClock).advance(1000);
  const second = await createBatch(owner, batchFile(2));
  const page = await owner.batches.list({ limit: 1 });
  assert.deepEqual(page.data.map((b) => b.id), [second.id]);
  assert.equal(page.has_more, true);
  const next = await owner.batches.list({ limit: 1, after: second.id });
  assert.deepEqual(next.data.map((b) => b.id), [created.id]);
  await waitFor(owner, second.id, ended);

  // Deleting a file: gone for its owner too.
  assert.deepEqual(await owner.files.delete(created.input_file_id), {
    id: created.input_file_id,
    object: "file",
    deleted: true,
  });
  await assert.rejects(owner.files.retrieve(created.input_file_id), OpenAI.NotFoundError);
});

Deno.test("batches: the Files and Batch APIs need an API key", async () => {
  await using upstream = startFakeOpenAI();
  await using server = await gateway(upstream);
  const res = await fetch(`${server.url}/v1/batches`);
  assert.equal(res.status, 401);
  assert.match((await res.json()).error.message, /need an API key/);
});

Deno.test("batches: a line that keeps meeting upstream failures goes to the error file after max_attempts", async () => {
  await using upstream = startFakeOpenAI();
  upstream.faults = Array.from({ length: 3 }, () => ({ status: 503, message: "overloaded" }));
  await using server = await gateway(upstream, (raw) => {
    raw.batches = { max_attempts: 3 };
  });
  const openai = client(server, await createKey(server));
  const line = JSON.stringify({
    custom_id: "flaky",
    method: "POST",
    url: "/v1/chat/completions",
    body: { model: "oa-chat", messages: [{ role: "user", content: "hi" }] },
  });
  const done = await waitFor(openai, (await createBatch(openai, line)).id, ended);
  assert.equal(done.status, "completed");
  assert.deepEqual(done.request_counts, { total: 1, completed: 0, failed: 1 });
  assert.equal(done.output_file_id, null);
  const [error] = await fileLines(openai, done.error_file_id);
  assert.equal(error!.custom_id, "flaky");
  // The upstream's 503 as the gateway answers it (502, its upstream failed).
  assert.equal((error!.response as { status_code: number }).status_code, 502);
  assert.equal(upstream.received.length, 3);
});

Deno.test("batches: a batch still running at the end of its window expires with what it has", async () => {
  await using upstream = startFakeOpenAI();
  // No batch line may run (the key's chat limit is used up by live traffic's share).
  await using server = await gateway(upstream, keyChatLimit({ per_minute: 2, per_day: 1000 }));
  const openai = client(server, await createKey(server));
  const created = await createBatch(openai, chatLines(3));
  await waitFor(openai, created.id, (b) => (b.request_counts?.completed ?? 0) === 1);
  // What the 24 h delayed message does when it comes.
  await server.kv.enqueue({ kind: "batch_expire", batch: created.id });
  const expired = await waitFor(openai, created.id, ended);
  assert.equal(expired.status, "expired");
  assert.equal(typeof expired.expired_at, "number");
  assert.deepEqual(expired.request_counts, { total: 3, completed: 1, failed: 0 });
  assert.equal((await fileLines(openai, expired.output_file_id)).length, 1);
});

Deno.test("batches: lines keep within the batch's share of the key's token limit", async () => {
  await using upstream = startFakeOpenAI();
  await using server = await gateway(
    upstream,
    keyChatLimit({ per_minute: 1000, per_day: 100000, tokens_per_minute: 300 }),
  );
  const openai = client(server, await createKey(server));
  // Each line uses a few dozen tokens: once the batch's lines have used half of the key's 300
  // a minute, the rest wait for the next minute (never, on the test's clock).
  const lines = Array.from({ length: 10 }, (_, i) =>
    JSON.stringify({
      custom_id: customId(i),
      method: "POST",
      url: "/v1/chat/completions",
      body: {
        model: "sim-chat",
        max_tokens: 30,
        messages: [{ role: "user", content: `Tell me about the number ${i}.` }],
      },
    })).join("\n");
  const created = await createBatch(openai, lines);
  const some = await waitFor(openai, created.id, (b) => (b.request_counts?.completed ?? 0) > 0);
  assert.equal(some.status, "in_progress");
  await new Promise((r) => setTimeout(r, 300));
  const later = await openai.batches.retrieve(created.id);
  assert.ok(later.request_counts!.completed < 10, JSON.stringify(later.request_counts));
  assert.equal(later.request_counts!.failed, 0, "waiting lines are not failed");
  // Live traffic still gets through.
  const live = await openai.chat.completions.create({
    model: "sim-chat",
    max_tokens: 30,
    messages: [{ role: "user", content: "live" }],
  });
  assert.ok(live.choices[0]!.message.content);
  await openai.batches.cancel(created.id);
  await waitFor(openai, created.id, ended);
});
