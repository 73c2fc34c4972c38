/**
 * Anthropic's documented order of a Messages stream, checked event by event on a transcript
 * (`event:` names and `data:` payloads as read from the raw SSE bytes): `message_start` first;
 * content blocks numbered 0, 1, … each started, filled with deltas of its own kind and stopped
 * before the next starts; `message_delta` once, after every block stopped; `message_stop`
 * last; `ping` anywhere after `message_start`; an `error` event only last.
 */
import assert from "node:assert/strict";

/** One SSE event as read off the wire. */
export interface WireEvent {
  event: string;
  data: Record<string, unknown>;
}

/** The events of an SSE body (every one named, its data JSON whose `type` is the name). */
export function parseTranscript(text: string): WireEvent[] {
  const out: WireEvent[] = [];
  for (const chunk of text.split(/\r?\n\r?\n/)) {
    if (chunk.trim() === "") continue;
    const lines = chunk.split(/\r?\n/);
    const event = lines.find((l) => l.startsWith("event:"))?.slice(6).trim();
    const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, ""))
      .join("\n");
    assert.ok(event, `every event is named: ${chunk}`);
    const parsed = JSON.parse(data);
    assert.equal(parsed.type, event, "the data's type is the event's name");
    out.push({ event, data: parsed });
  }
  return out;
}

const DELTAS: Record<string, string[]> = {
  text: ["text_delta", "citations_delta"],
  thinking: ["thinking_delta", "signature_delta"],
  redacted_thinking: [],
  tool_use: ["input_json_delta"],
};

/** The message a valid transcript adds up to (blocks with their text, thinking, signature
 * and input); throws on the first event out of order or out of shape. */
export function checkTranscript(events: WireEvent[]): {
  message: Record<string, unknown>;
  blocks: Record<string, unknown>[];
  stopReason: string | null;
  usage: Record<string, unknown>;
  error: Record<string, unknown> | null;
} {
  assert.equal(events[0]?.event, "message_start", "message_start comes first");
  const message = events[0]!.data.message as Record<string, unknown>;
  assert.equal(message.type, "message");
  assert.equal(message.role, "assistant");
  assert.deepEqual(message.content, []);
  assert.equal(message.stop_reason, null);
  assert.equal(typeof (message.usage as Record<string, unknown>).input_tokens, "number");
  const blocks: Record<string, unknown>[] = [];
  let open: Record<string, unknown> | null = null;
  let json = "";
  let stopReason: string | null = null;
  let usage: Record<string, unknown> = message.usage as Record<string, unknown>;
  let delta = false;
  let stopped = false;
  let error: Record<string, unknown> | null = null;
  events.slice(1).forEach(({ event, data }, i) => {
    const at = `event ${i + 1} (${event})`;
    assert.ok(!stopped, `${at}: nothing after message_stop`);
    assert.equal(error, null, `${at}: nothing after an error event`);
    switch (event) {
      case "ping":
        return;
      case "error":
        error = data.error as Record<string, unknown>;
        assert.equal(typeof error.type, "string");
        assert.equal(typeof error.message, "string");
        return;
      case "content_block_start": {
        assert.ok(!delta, `${at}: no block after message_delta`);
        assert.equal(open, null, `${at}: the block before stopped first`);
        assert.equal(data.index, blocks.length, `${at}: blocks are numbered in order`);
        open = { ...(data.content_block as Record<string, unknown>) };
        assert.ok((open.type as string) in DELTAS, `${at}: a known block type ${open.type}`);
        if (open.type === "tool_use") {
          assert.deepEqual(open.input, {}, `${at}: tool_use starts with an empty input`);
          assert.equal(typeof open.id, "string");
          assert.equal(typeof open.name, "string");
        }
        json = "";
        blocks.push(open);
        return;
      }
      case "content_block_delta": {
        assert.ok(open !== null, `${at}: a delta inside a started block`);
        assert.equal(data.index, blocks.length - 1, `${at}: the delta is for the open block`);
        const d = data.delta as Record<string, unknown>;
        assert.ok(
          DELTAS[open.type as string]!.includes(d.type as string),
          `${at}: ${d.type} in ${open.type}`,
        );
        if (d.type === "text_delta") open.text = (open.text as string) + d.text;
        if (d.type === "thinking_delta") open.thinking = (open.thinking as string) + d.thinking;
        if (d.type === "signature_delta") open.signature = d.signature;
        if (d.type === "input_json_delta") json += d.partial_json;
        return;
      }
      case "content_block_stop":
        assert.ok(open !== null, `${at}: a stop for a started block`);
        assert.equal(data.index, blocks.length - 1, `${at}: the stop is for the open block`);
        if (open.type === "tool_use") open.input = json === "" ? {} : JSON.parse(json);
        if (open.type === "thinking") {
          assert.ok(typeof open.signature === "string" && open.signature !== "", `${at}: signed`);
        }
        open = null;
        return;
      case "message_delta": {
        assert.equal(open, null, `${at}: every block stopped before message_delta`);
        assert.ok(!delta, `${at}: one message_delta`);
        delta = true;
        stopReason = (data.delta as Record<string, unknown>).stop_reason as string;
        usage = { ...usage, ...(data.usage as Record<string, unknown>) };
        assert.equal(typeof usage.output_tokens, "number");
        return;
      }
      case "message_stop":
        assert.ok(delta, `${at}: message_delta came before message_stop`);
        stopped = true;
        return;
      default:
        assert.fail(`${at}: an event Anthropic does not send`);
    }
  });
  if (error === null) assert.ok(stopped, "the stream ends with message_stop");
  return { message, blocks, stopReason, usage, error };
}
