/**
 * Micro-benchmarks of SSE framing: `deno task bench:micro` (or `deno bench -A bench/sse_bench.ts`).
 * Encoding a chunk as an event, one by one and as the group of one upstream read, and decoding
 * an upstream's events, one event per read and a whole burst in one read.
 */
import { encodeEvent, encodeEvents, SseDecoder } from "../src/http/sse.ts";
import { ChunkWriter } from "../src/providers/chunks.ts";
import { bytesOf, openaiEvents } from "./fixtures.ts";

const writer = new ChunkWriter("chatcmpl-bench", 1_700_000_000, "bench-openai");
const chunk = writer.delta({ content: "tok7 " });
const burst = [writer.delta({ role: "assistant", content: "" })];
for (let i = 0; i < 20; i++) burst.push(writer.delta({ content: `tok${i} ` }));
burst.push(writer.finish("stop"));

Deno.bench("encodeEvent: one chunk", { group: "encode" }, () => {
  encodeEvent(chunk);
});

Deno.bench("encodeEvents: 22 chunks in one write", { group: "encode" }, () => {
  encodeEvents(burst);
});

const events = openaiEvents(20);
const one = bytesOf(events.slice(5, 6));
const all = bytesOf(events);
const decoder = new SseDecoder();

Deno.bench("SseDecoder: one event per read", { group: "decode" }, () => {
  decoder.decode(one);
});

Deno.bench(`SseDecoder: ${events.length} events in one read`, { group: "decode" }, () => {
  decoder.decode(all);
});
