/**
 * What the batch tests share: a batch input file of chat and embeddings lines on the simulator
 * and on the fake OpenAI upstream (plus lines naming a model that does not exist), the config
 * of those models, and waiting for a batch with the `openai` client.
 */
import assert from "node:assert/strict";
import OpenAI, { toFile } from "npm:openai@7.55.0";

/** The models the lines name: the simulator's chat and embedding models, and one of each on
 * the OpenAI-style provider `oa`. */
export const BATCH_MODELS: readonly Record<string, unknown>[] = [
  { id: "sim-embed", provider: "sim", embeddings: { dimensions: 256 } },
  { id: "oa-chat", provider: "oa", upstream_model: "gpt-up", chat_completions: true },
  { id: "oa-embed", provider: "oa", upstream_model: "text-embedding-3-small", embeddings: true },
];

/** The custom id of line `i`. */
export const customId = (i: number) => `line-${String(i).padStart(4, "0")}`;

/** Lines whose model does not exist (they go to the error file). */
export const UNKNOWN_MODEL_EVERY = 40;

/** Line `i`: chat or embeddings, on the simulator or the fake, in turn; every 40th names an
 * unknown model. */
export function batchLine(i: number): Record<string, unknown> {
  const unknown = i % UNKNOWN_MODEL_EVERY === 39;
  switch (i % 4) {
    case 0:
    case 2: {
      const model = unknown ? "no-such-model" : i % 4 === 0 ? "sim-chat" : "oa-chat";
      return {
        custom_id: customId(i),
        method: "POST",
        url: "/v1/chat/completions",
        body: { model, messages: [{ role: "user", content: `Say something about ${i}.` }] },
      };
    }
    default: {
      const model = unknown ? "no-such-model" : i % 4 === 1 ? "sim-embed" : "oa-embed";
      return {
        custom_id: customId(i),
        method: "POST",
        url: "/v1/embeddings",
        body: { model, input: `document ${i}` },
      };
    }
  }
}

/** Lines `0..n-1` as a JSONL file. */
export function batchFile(n: number): string {
  return Array.from({ length: n }, (_, i) => JSON.stringify(batchLine(i))).join("\n") + "\n";
}

/** A JSONL file of `n` chat lines to `sim-chat` ("hi 0", "hi 1"...). */
export function chatLines(n: number): string {
  return Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      custom_id: customId(i),
      method: "POST",
      url: "/v1/chat/completions",
      body: { model: "sim-chat", messages: [{ role: "user", content: `hi ${i}` }] },
    })).join("\n");
}

/** Uploads `text` as a batch input file and creates a batch over it. */
export async function createBatch(client: OpenAI, text: string): Promise<OpenAI.Batch> {
  const file = await client.files.create({
    file: await toFile(new TextEncoder().encode(text), "batch.jsonl"),
    purpose: "batch",
  });
  assert.equal(file.object, "file");
  assert.equal(file.purpose, "batch");
  return await client.batches.create({
    input_file_id: file.id,
    endpoint: "/v1/chat/completions",
    completion_window: "24h",
    metadata: { job: "test" },
  });
}

/** Retrieves the batch until `done` says so (`timeoutMs` at most). */
export async function waitFor(
  client: OpenAI,
  id: string,
  done: (b: OpenAI.Batch) => boolean,
  timeoutMs = 60_000,
): Promise<OpenAI.Batch> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const batch = await client.batches.retrieve(id);
    if (done(batch)) return batch;
    if (Date.now() > deadline) throw new Error(`batch ${id} stuck: ${JSON.stringify(batch)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The lines of a file's content. */
export async function fileLines(
  client: OpenAI,
  id: string | null | undefined,
): Promise<Record<string, unknown>[]> {
  if (!id) return [];
  const text = await (await client.files.content(id)).text();
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

/** Whether the batch has ended. */
export function ended(b: OpenAI.Batch): boolean {
  return ["completed", "failed", "expired", "cancelled"].includes(b.status);
}
