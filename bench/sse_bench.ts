/**
 * Micro-benchmarks of SSE framing: `deno task bench:micro` (or `deno bench -A bench/sse_bench.ts`).
 * Rendering canonical events as chat chunk events, one by one and as the batch of one upstream
 * read, and decoding an upstream's events, one event per read and a whole burst in one read.
 */
import { ChatChunkRenderer } from "../src/api/chat_completions/stream.ts";
import type { CanonicalEvent } from "../src/canonical/events.ts";
import { SseDecoder } from "../src/http/sse.ts";
import { bytesOf, openaiEvents } from "./fixtures.ts";

const renderer = new ChatChunkRenderer({
  requestId: "req_bench",
  created: 1_700_000_000,
  model: "bench-openai",
  includeUsage: false,
  excludeReasoning: false,
});
renderer.render([{ type: "start" }, { type: "block_start", index: 0, block: { type: "text" } }]);
const one: CanonicalEvent[] = [{
  type: "block_delta",
  index: 0,
  delta: { type: "text", text: "tok7 " },
}];
const burst: CanonicalEvent[] = [];
for (let i = 0; i < 20; i++) {
  burst.push({ type: "block_delta", index: 0, delta: { type: "text", text: `tok${i} ` } });
}

Deno.bench("ChatChunkRenderer: one text delta", { group: "encode" }, () => {
  renderer.render(one);
});

Deno.bench("ChatChunkRenderer: 20 text deltas in one write", { group: "encode" }, () => {
  renderer.render(burst);
});

const events = openaiEvents(20);
const oneRead = bytesOf(events.slice(5, 6));
const all = bytesOf(events);
const decoder = new SseDecoder();

Deno.bench("SseDecoder: one event per read", { group: "decode" }, () => {
  decoder.decode(oneRead);
});

Deno.bench(`SseDecoder: ${events.length} events in one read`, { group: "decode" }, () => {
  decoder.decode(all);
});
