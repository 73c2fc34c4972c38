import assert from "node:assert/strict";
import { ByteReader, readText } from "../../src/http/byte_reader.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function readAll(reader: ByteReader): Promise<string[]> {
  const out: string[] = [];
  for (let bytes = await reader.read(); bytes !== null; bytes = await reader.read()) {
    out.push(decoder.decode(bytes));
  }
  return out;
}

Deno.test("ByteReader reads a byte stream into its own buffer, in reads no larger than it", async () => {
  const pieces = ["alpha", "beta gamma delta"];
  const body = new ReadableStream({
    type: "bytes",
    pull(controller) {
      const next = pieces.shift();
      if (next !== undefined) return controller.enqueue(encoder.encode(next));
      controller.close();
      controller.byobRequest?.respond(0);
    },
  });
  const reader = new ByteReader(body, 8, 8);
  const reads: Uint8Array[] = [];
  for (let bytes = await reader.read(); bytes !== null; bytes = await reader.read()) {
    assert.equal(bytes.buffer.byteLength, 8, "each read lands in the reader's 8-byte buffer");
    reads.push(bytes.slice());
  }
  assert.deepEqual(reads.map((b) => decoder.decode(b)), ["alpha", "beta gam", "ma delta"]);
});

Deno.test("ByteReader doubles its buffer, up to the maximum, when a read fills it", async () => {
  const text = "x".repeat(100);
  const body = new ReadableStream({
    type: "bytes",
    start(controller) {
      controller.enqueue(encoder.encode(text));
      controller.close();
    },
  });
  const reader = new ByteReader(body, 8, 32);
  const sizes: number[] = [];
  let all = "";
  for (let bytes = await reader.read(); bytes !== null; bytes = await reader.read()) {
    sizes.push(bytes.byteLength);
    all += decoder.decode(bytes);
  }
  assert.deepEqual(sizes, [8, 16, 32, 32, 12]);
  assert.equal(all, text);
});

Deno.test("ByteReader reads a fetch body whole, and any other stream as it comes", async () => {
  const text = "x".repeat(40_000) + "end";
  const bytes = encoder.encode(text);
  const fetched = new Response(bytes).body!;
  assert.equal((await readAll(new ByteReader(fetched, 1024))).join(""), text);
  const plain = ReadableStream.from([
    encoder.encode("one "),
    new Uint8Array(0),
    encoder.encode("two"),
  ]);
  assert.deepEqual(await readAll(new ByteReader(plain)), ["one ", "two"]);
});

Deno.test("ByteReader.cancel cancels the stream", async () => {
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.enqueue(encoder.encode("data"));
    },
    cancel() {
      cancelled = true;
    },
  });
  const reader = new ByteReader(body);
  assert.equal(decoder.decode((await reader.read())!), "data");
  reader.cancel();
  await new Promise((r) => setTimeout(r, 0));
  assert.ok(cancelled);
});

Deno.test("readText reads a stream up to the limit as text, and says it was whole", async () => {
  const text = "héllo ".repeat(1000);
  const bytes = encoder.encode(text);
  assert.deepEqual(await readText(new Response(bytes).body, bytes.length), {
    text,
    complete: true,
  });
  assert.deepEqual(await readText(null, 10), { text: "", complete: true });
});

Deno.test("readText stops at the limit and cancels the rest, however long it is", async () => {
  let pulled = 0;
  let cancelled = false;
  const endless = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled += 1000;
      controller.enqueue(new Uint8Array(1000).fill(0x61));
    },
    cancel() {
      cancelled = true;
    },
  });
  const read = await readText(endless, 2500);
  assert.equal(read.complete, false);
  assert.equal(read.text, "a".repeat(2500));
  assert.ok(pulled <= 4000, `pulled ${pulled} bytes for a limit of 2500`);
  assert.ok(cancelled);
});
