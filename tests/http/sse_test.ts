import assert from "node:assert/strict";
import {
  doneEvent,
  encodeData,
  encodeEvent,
  SseDecoder,
  SseDecoderStream,
  type SseEvent,
  sseHeaders,
  sseResponse,
} from "../../src/http/sse.ts";

const decoder = new TextDecoder();

async function decode(chunks: Uint8Array[]): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  const stream = ReadableStream.from(chunks).pipeThrough(new SseDecoderStream());
  for await (const event of stream) events.push(event);
  return events;
}

Deno.test("encodeEvent, encodeData and doneEvent frame one data line and a blank line", () => {
  assert.equal(
    decoder.decode(encodeEvent({ a: "x\ny", b: [1] })),
    'data: {"a":"x\\ny","b":[1]}\n\n',
  );
  assert.equal(decoder.decode(encodeData('{"k":1}')), 'data: {"k":1}\n\n');
  assert.equal(decoder.decode(doneEvent()), "data: [DONE]\n\n");
  for (const headers of [sseHeaders(), sseResponse(new ReadableStream()).headers]) {
    assert.match(headers.get("content-type")!, /^text\/event-stream/);
    assert.equal(headers.get("cache-control"), "no-cache");
    assert.equal(headers.get("x-accel-buffering"), "no");
  }
});

const SAMPLE = [
  ": a comment line\r\n",
  'data: {"text":"héllo ✓ 😀"}\r\n\r\n',
  "event: error\n",
  "id: 7\n",
  "data: line one\n",
  "data:line two\n\n",
  "data: cr only\r\r",
  "data: [DONE]\n\n",
].join("");

const EXPECTED: SseEvent[] = [
  { event: "message", data: '{"text":"héllo ✓ 😀"}' },
  { event: "error", data: "line one\nline two", id: "7" },
  { event: "message", data: "cr only", id: "7" },
  { event: "message", data: "[DONE]", id: "7" },
];

Deno.test("SseDecoderStream decodes comments, event names, ids, multi-line data and any line ending", async () => {
  const bytes = new TextEncoder().encode(SAMPLE);
  assert.deepEqual(await decode([bytes]), EXPECTED);
});

Deno.test("SseDecoderStream gives the same events wherever the chunks split lines, events and UTF-8", async () => {
  const bytes = new TextEncoder().encode(SAMPLE);
  for (let cut = 1; cut < bytes.length; cut++) {
    const events = await decode([bytes.subarray(0, cut), bytes.subarray(cut)]);
    assert.deepEqual(events, EXPECTED, `split at byte ${cut}`);
  }
  const single = Array.from(bytes, (b) => Uint8Array.of(b));
  assert.deepEqual(await decode(single), EXPECTED);
});

Deno.test("SseDecoderStream dispatches an event left unterminated at the end of the stream", async () => {
  const events = await decode([new TextEncoder().encode("data: a\n\ndata: tail")]);
  assert.deepEqual(events, [{ event: "message", data: "a" }, { event: "message", data: "tail" }]);
  assert.deepEqual(await decode([new TextEncoder().encode("\n\n: only a comment\n\n")]), []);
});

Deno.test("SseDecoder gives, per read, the events that read completed", () => {
  const bytes = new TextEncoder().encode(SAMPLE);
  const decoder = new SseDecoder();
  const cut = new TextEncoder().encode(SAMPLE.slice(0, SAMPLE.indexOf("event: error"))).length;
  const first = decoder.decode(bytes.subarray(0, cut + 3));
  assert.deepEqual(first, EXPECTED.slice(0, 1));
  assert.deepEqual(decoder.decode(bytes.subarray(cut + 3)), EXPECTED.slice(1));
  assert.deepEqual(decoder.end(), []);
  const tail = new SseDecoder();
  assert.deepEqual(tail.decode(new TextEncoder().encode("data: a\n\ndata: b")), [
    { event: "message", data: "a" },
  ]);
  assert.deepEqual(tail.end(), [{ event: "message", data: "b" }]);
});
