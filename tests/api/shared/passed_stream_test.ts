import assert from "node:assert/strict";
import { passedStream } from "../../../src/api/shared/passed_stream.ts";
import type { PassedBatch } from "../../../src/providers/types.ts";
import { testContext } from "../../support/pipeline.ts";

const encoder = new TextEncoder();

function batch(text: string, extra: Partial<PassedBatch> = {}): PassedBatch {
  return { bytes: encoder.encode(text), usage: null, ...extra };
}

async function* batches(...items: PassedBatch[]): AsyncGenerator<PassedBatch> {
  for (const item of items) yield item;
}

/** Whether a read of `reader` has settled one microtask after it was asked for: what the
 * server waits before it writes the head alone. */
async function readyAtOnce(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<boolean> {
  let settled = false;
  const read = reader.read();
  read.then(() => (settled = true), () => {});
  await null;
  const ready = settled;
  await read;
  return ready;
}

const options = {
  errorEvent: () => "event: error\n\n",
  onUnexpected: (e: unknown) => {
    throw e;
  },
};

Deno.test("a passed-through stream's first batch is ready at once, so that the server writes it with the head", async () => {
  const ctx = testContext();
  const response = await passedStream(ctx, batches(batch("data: 1\n\n"), batch("data: 2\n\n")), {
    ...options,
    abort: new AbortController(),
  });
  const reader = response.body!.getReader();
  assert.equal(await readyAtOnce(reader), true);
  assert.deepEqual(
    await reader.read().then((r) => new TextDecoder().decode(r.value)),
    "data: 2\n\n",
  );
  assert.equal((await reader.read()).done, true);
});

Deno.test("a passed-through stream's batch that ends the answer waits for its `finished` before it is handed on", async () => {
  const ctx = testContext();
  const stored: Record<string, unknown>[] = [];
  const gate = Promise.withResolvers<void>();
  const final = { id: "resp_1", status: "completed" };
  const response = await passedStream(ctx, batches(batch("data: done\n\n", { final })), {
    ...options,
    abort: new AbortController(),
    finished: async (response) => {
      await gate.promise;
      stored.push(response);
    },
  });
  const reader = response.body!.getReader();
  const read = reader.read();
  let settled = false;
  read.then(() => (settled = true));
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(settled, false, "handed on before it was stored");
  gate.resolve();
  assert.equal(new TextDecoder().decode((await read).value), "data: done\n\n");
  assert.deepEqual(stored, [final]);
});
