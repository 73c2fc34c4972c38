/** The event-stream decoder against frames from AWS's own codec (`@smithy/eventstream-codec`). */
import assert from "node:assert/strict";
import { EventStreamCodec } from "npm:@smithy/eventstream-codec@4.5.2";
import { fromUtf8, toUtf8 } from "npm:@smithy/util-utf8@4.5.2";
import { ApiError } from "../../../src/errors.ts";
import {
  type EventMessage,
  EventStreamDecoder,
} from "../../../src/providers/bedrock/event_stream.ts";
import { eventFrame, exceptionFrame } from "../../support/fake_bedrock.ts";

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function concat(frames: Uint8Array[]): Uint8Array {
  const all = new Uint8Array(frames.reduce((n, f) => n + f.length, 0));
  let at = 0;
  for (const f of frames) {
    all.set(f, at);
    at += f.length;
  }
  return all;
}

const FRAMES = [
  eventFrame("messageStart", { role: "assistant" }),
  eventFrame("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "Héllo ✓ 👋" } }),
  eventFrame("messageStop", { stopReason: "end_turn" }),
  exceptionFrame("throttlingException", "Too many requests, please wait before trying again."),
];
const BYTES = concat(FRAMES);

function summary(messages: EventMessage[]) {
  return messages.map((m) => ({
    type: m.headers[":event-type"] ?? m.headers[":exception-type"],
    kind: m.headers[":message-type"],
    payload: JSON.parse(new TextDecoder().decode(m.payload)),
  }));
}

const WHOLE = summary(new EventStreamDecoder(1 << 20).decode(BYTES));

Deno.test("event stream: AWS's frames decode to their headers and payloads", () => {
  assert.deepEqual(WHOLE.map((m) => [m.type, m.kind]), [
    ["messageStart", "event"],
    ["contentBlockDelta", "event"],
    ["messageStop", "event"],
    ["throttlingException", "exception"],
  ]);
  assert.equal(WHOLE[1]!.payload.delta.text, "Héllo ✓ 👋");
});

Deno.test("event stream: split at every byte boundary, the same messages come out", () => {
  for (let cut = 1; cut < BYTES.length; cut++) {
    const decoder = new EventStreamDecoder(1 << 20);
    // The reader reuses its buffers: pieces are copies that are overwritten after use.
    const first = BYTES.slice(0, cut);
    const out = decoder.decode(first);
    first.fill(0);
    const second = BYTES.slice(cut);
    out.push(...decoder.decode(second));
    second.fill(0);
    decoder.end();
    assert.deepEqual(summary(out), WHOLE, `cut at ${cut}`);
  }
});

Deno.test("event stream: fed one byte at a time, every message comes out whole", () => {
  const decoder = new EventStreamDecoder(1 << 20);
  const out: EventMessage[] = [];
  for (const byte of BYTES) out.push(...decoder.decode(Uint8Array.of(byte)));
  decoder.end();
  assert.deepEqual(summary(out), WHOLE);
});

Deno.test("event stream: every header type AWS's codec writes is read", () => {
  const frame = codec.encode({
    headers: {
      t: { type: "boolean", value: true },
      f: { type: "boolean", value: false },
      b: { type: "byte", value: -5 },
      s: { type: "short", value: 300 },
      i: { type: "integer", value: -70000 },
      bin: { type: "binary", value: Uint8Array.of(1, 2, 3) },
      str: { type: "string", value: "ü" },
      ts: { type: "timestamp", value: new Date(Date.UTC(2026, 0, 15)) },
    },
    body: fromUtf8("{}"),
  });
  const [message] = new EventStreamDecoder(1024).decode(frame);
  assert.deepEqual(message!.headers, {
    t: true,
    f: false,
    b: -5,
    s: 300,
    i: -70000,
    bin: Uint8Array.of(1, 2, 3),
    str: "ü",
    ts: Date.UTC(2026, 0, 15),
  });
});

function rejects(bytes: Uint8Array, pattern: RegExp, max = 1 << 20) {
  assert.throws(() => new EventStreamDecoder(max).decode(bytes), (e) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.status, 502);
    assert.match(e.message, pattern);
    return true;
  });
}

Deno.test("event stream: a bad prelude CRC is a 502 before the message is waited for", () => {
  const bad = FRAMES[0]!.slice();
  bad[9]! ^= 0xff;
  // Only the prelude arrived: the check does not wait for the rest.
  rejects(bad.subarray(0, 12), /prelude CRC/);
  const lengthChanged = FRAMES[0]!.slice();
  lengthChanged[3]! += 1;
  rejects(lengthChanged, /prelude CRC/);
});

Deno.test("event stream: a bad message CRC (a payload byte changed) is a 502", () => {
  const bad = FRAMES[1]!.slice();
  bad[bad.length - 10]! ^= 0x01;
  rejects(bad, /message CRC/);
  const crc = FRAMES[1]!.slice();
  crc[crc.length - 1]! ^= 0x01;
  rejects(crc, /message CRC/);
});

Deno.test("event stream: a message over the limit is refused from its prelude; a cut stream is a 502", () => {
  rejects(FRAMES[1]!.subarray(0, 12), /larger than the gateway accepts \(40 bytes\)/, 40);
  const decoder = new EventStreamDecoder(1 << 20);
  decoder.decode(BYTES.subarray(0, FRAMES[0]!.length + 5));
  assert.throws(() => decoder.end(), /ended inside a message/);
});
