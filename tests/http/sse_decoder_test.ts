import assert from "node:assert/strict";
import {
  SseDecoder,
  SseDecoderStream,
  type SseEvent,
  SseEventTooLarge,
} from "../../src/http/sse.ts";

const encoder = new TextEncoder();

/** Decodes `pieces` (strings or raw bytes) fed as separate chunks. */
async function decode(pieces: (string | Uint8Array)[]): Promise<SseEvent[]> {
  const stream = ReadableStream.from(
    pieces.map((p) => typeof p === "string" ? encoder.encode(p) : p),
  ).pipeThrough(new SseDecoderStream());
  return await Array.fromAsync(stream);
}

/** Every way of cutting `bytes` into two chunks, plus one byte at a time. */
function cuts(bytes: Uint8Array): Uint8Array[][] {
  const out: Uint8Array[][] = [[...bytes].map((b) => Uint8Array.of(b))];
  for (let i = 0; i <= bytes.length; i++) out.push([bytes.subarray(0, i), bytes.subarray(i)]);
  return out;
}

const ANTHROPIC_EVENTS = 'event: message_start\ndata: {"type":"message_start"}\n\n' +
  'event: ping\ndata: {"type": "ping"}\n\n' +
  'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"héllo 🌍 世界"}}\n\n';

Deno.test("SseDecoderStream gives the same events however the bytes are cut", async () => {
  const bytes = encoder.encode(ANTHROPIC_EVENTS);
  const whole = await decode([bytes]);
  assert.deepEqual(whole.map((e) => e.event), ["message_start", "ping", "content_block_delta"]);
  assert.equal(JSON.parse(whole[2]!.data).delta.text, "héllo 🌍 世界");
  for (const pieces of cuts(bytes)) assert.deepEqual(await decode(pieces), whole);
});

Deno.test("SseDecoderStream handles CRLF, CR, comments, multi-line data and a missing space", async () => {
  const events = await decode([
    ": keep-alive comment\r\n",
    "data:first\r\ndata: second\r\n\r\n",
    'event: error\rdata: {"x":1}\r\r',
    "id: 7\ndata: [DONE]\n\n",
  ]);
  assert.deepEqual(events, [
    { event: "message", data: "first\nsecond" },
    { event: "error", data: '{"x":1}' },
    { event: "message", data: "[DONE]", id: "7" },
  ]);
});

Deno.test("SseDecoderStream keeps a CR and its LF together across an empty chunk", async () => {
  // "data: a\r" | "" | "\ndata: b\n\n": the CRLF is one line end, so one event "a\nb".
  const events = await decode(["data: a\r", new Uint8Array(0), "\ndata: b\n\n"]);
  assert.deepEqual(events, [{ event: "message", data: "a\nb" }]);
});

Deno.test("SseDecoderStream splits a CRLF across chunks once, not twice", async () => {
  const events = await decode(["data: a\r", "\n", "data: b\r", "\n\r", "\n"]);
  assert.deepEqual(events, [{ event: "message", data: "a\nb" }]);
});

Deno.test("SseDecoderStream reads a long line fed one byte at a time", async () => {
  const text = "x".repeat(50_000);
  const bytes = encoder.encode(`data: ${text}\n\n`);
  const pieces: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += 1) pieces.push(bytes.subarray(i, i + 1));
  const events = await decode(pieces);
  assert.equal(events.length, 1);
  assert.equal(events[0]!.data.length, text.length);
});

/** Feeds `pieces` to a decoder with `limit`; the events, or the error it threw. */
function decodeLimited(pieces: Uint8Array[], limit: number): SseEvent[] | Error {
  const decoder = new SseDecoder(limit);
  const out: SseEvent[] = [];
  try {
    for (const piece of pieces) out.push(...decoder.decode(piece));
    out.push(...decoder.end());
  } catch (e) {
    if (e instanceof SseEventTooLarge) return e;
    throw e;
  }
  return out;
}

Deno.test("SseDecoder takes events of up to maxEventBytes and refuses one byte more, however cut", () => {
  // "data: " + 14 bytes + "\n\n" is 22 bytes; the blank lines between events reset the count.
  const event = "data: 0123456789abcd\n\n";
  const bytes = encoder.encode(event.repeat(5));
  for (const pieces of cuts(bytes)) {
    const events = decodeLimited(pieces, 22);
    assert.ok(Array.isArray(events) && events.length === 5, "five events at the limit");
    const error = decodeLimited(pieces, 21);
    assert.ok(error instanceof SseEventTooLarge && error.limit === 21);
  }
});

Deno.test("SseDecoder counts an event's UTF-8 bytes, comments and fields included", () => {
  // "data: " + "é" (2 bytes) × 4 + "\n\n" is 16 bytes, in 12 characters.
  assert.equal((decodeLimited([encoder.encode("data: éééé\n\n")], 16) as SseEvent[]).length, 1);
  assert.ok(decodeLimited([encoder.encode("data: éééé\n\n")], 15) instanceof SseEventTooLarge);
  const commented = encoder.encode(": keep-alive\nevent: x\ndata: 1\n\n");
  assert.ok(decodeLimited([commented], commented.length - 1) instanceof SseEventTooLarge);
});

Deno.test("SseDecoder stops an endless line on the read that passes the limit", () => {
  const decoder = new SseDecoder(1024);
  assert.deepEqual(decoder.decode(encoder.encode("data: {}\n\ndata: ")), [
    { event: "message", data: "{}" },
  ]);
  const read = new Uint8Array(100).fill(0x78);
  let fed = 6;
  assert.throws(() => {
    for (;; fed += read.length) decoder.decode(read);
  }, SseEventTooLarge);
  assert.equal(fed, 1006, "the read that brought the line to 1,106 bytes threw");
});
