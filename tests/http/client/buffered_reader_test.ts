import assert from "node:assert/strict";
import { BufferedReader, LineTooLong } from "../../../src/http/client/buffered_reader.ts";
import { growing, latin1, ScriptedSource } from "./scripted_source.ts";

const decoder = new TextDecoder();

/** Every line of `reader` until its source ends. */
async function lines(reader: BufferedReader, max = 1024): Promise<string[]> {
  const out: string[] = [];
  for (let line = await reader.line(max, "a line"); line !== null;) {
    out.push(line);
    line = await reader.line(max, "a line");
  }
  return out;
}

Deno.test("BufferedReader.line takes CRLF and bare LF lines, keeps a CR inside a line, and ends with the source", async () => {
  const text = "HTTP/1.1 200 OK\r\nbare\n\r\nin\rside\r\nno end";
  const reader = new BufferedReader(new ScriptedSource(text));
  assert.deepEqual(await lines(reader), ["HTTP/1.1 200 OK", "bare", "", "in\rside"]);
  assert.equal(reader.available, 6, "an unfinished last line stays buffered");
  assert.equal(latin1(reader.buffered(100)), "no end");
  assert.equal(reader.received, new TextEncoder().encode(text).length);
});

Deno.test("BufferedReader.line gives the same lines whatever the reads' sizes (1, 2, 3… bytes; every fixed size)", async () => {
  const text = "a\r\n\r\nbc\r\ndef\nghij\r\n" + "k".repeat(40) + "\r\nlast\r\n";
  const expected = ["a", "", "bc", "def", "ghij", "k".repeat(40), "last"];
  assert.deepEqual(await lines(new BufferedReader(new ScriptedSource(text, growing), 4)), expected);
  for (let size = 1; size <= text.length; size++) {
    const reader = new BufferedReader(new ScriptedSource(text, size), 4);
    assert.deepEqual(await lines(reader), expected, `reads of ${size} bytes`);
  }
  // A CR at the end of one read and its LF at the start of the next.
  const split = new ScriptedSource("abc\r\nxyz\r\n", (i) => (i === 0 ? 4 : 100));
  assert.deepEqual(await lines(new BufferedReader(split)), ["abc", "xyz"]);
});

Deno.test("BufferedReader.line decodes bytes as ISO-8859-1, one character per byte", async () => {
  const bytes = new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0xff, 0x0d, 0x0a]);
  const reader = new BufferedReader(new ScriptedSource(bytes));
  assert.equal(await reader.line(100, "a line"), "caf\u00e9\u00ff");
});

Deno.test("BufferedReader.line refuses a line over its limit, finished or not, and takes one of exactly the limit", async () => {
  const exact = new BufferedReader(new ScriptedSource("12345\r\n"));
  assert.equal(await exact.line(5, "a line"), "12345");

  const finished = new BufferedReader(new ScriptedSource("123456\r\n"));
  await assert.rejects(finished.line(5, "a status line"), (e: unknown) => {
    assert.ok(e instanceof LineTooLong);
    assert.match(e.message, /a status line longer than 5 bytes/);
    return true;
  });

  // No line end in sight: refused once more than the limit is buffered, without reading on.
  const source = new ScriptedSource("x".repeat(100_000), 3);
  const endless = new BufferedReader(source, 4);
  await assert.rejects(endless.line(10, "a line"), LineTooLong);
  assert.ok(source.reads <= 11, `${source.reads} reads for a limit of 10 bytes`);
});

Deno.test("BufferedReader.bufferedLine takes a buffered line without reading, or says it has none", async () => {
  const source = new ScriptedSource("one\r\ntw", Infinity);
  const reader = new BufferedReader(source);
  assert.equal(reader.bufferedLine(100, "a line"), undefined, "nothing buffered yet");
  assert.equal(source.reads, 0);
  assert.ok(await reader.fill());
  assert.equal(reader.bufferedLine(100, "a line"), "one");
  assert.equal(reader.bufferedLine(100, "a line"), undefined, "half a line");
  assert.equal(source.reads, 1);
  assert.equal(reader.available, 2);
  assert.throws(() => reader.bufferedLine(1, "a line"), LineTooLong);
});

Deno.test("BufferedReader scans a line trickling in one byte a read once, not once per read", async () => {
  // A quadratic rescan of 200 000 bytes is 2·10¹⁰ steps (many seconds); the linear scan plus
  // 200 000 reads takes a few tens of milliseconds. The box only catches the catastrophe.
  const bytes = 200_000;
  const source = new ScriptedSource("y".repeat(bytes) + "\n", 1);
  const reader = new BufferedReader(source);
  const started = performance.now();
  const line = await reader.line(bytes, "a line");
  const ms = performance.now() - started;
  assert.equal(line?.length, bytes);
  assert.equal(source.reads, bytes + 1, "one read per byte");
  assert.ok(ms < 5000, `a trickled line of ${bytes} bytes took ${ms.toFixed(0)} ms`);
});

Deno.test("BufferedReader grows its buffer for a long line and moves unread bytes to its front", async () => {
  const reader = new BufferedReader(new ScriptedSource("ab\n" + "c".repeat(50) + "\n", 3), 4);
  assert.equal(await reader.line(100, "a line"), "ab");
  assert.equal(await reader.line(100, "a line"), "c".repeat(50));
  assert.ok(reader.buffer.length >= 51, "the buffer grew to hold the line");
  assert.equal(await reader.line(100, "a line"), null);

  // Unread bytes at the back of a full buffer are moved to the front, not copied to a bigger one.
  const moved = new BufferedReader(new ScriptedSource("12\n3456789", 8), 8);
  assert.equal(await moved.line(10, "a line"), "12");
  assert.equal(moved.end, 8, "the first read filled the buffer");
  const before = moved.buffer;
  assert.ok(await moved.fill(), "more bytes came");
  assert.equal(moved.buffer, before, "the same buffer");
  assert.equal(moved.start, 0);
  assert.equal(latin1(moved.buffered(10)), "3456789");
});

Deno.test("BufferedReader.buffered takes buffered bytes only; some reads when none are buffered", async () => {
  const source = new ScriptedSource("hello world", 5);
  const reader = new BufferedReader(source);
  assert.equal(reader.buffered(3).length, 0, "nothing buffered: nothing taken, nothing read");
  assert.equal(source.reads, 0);
  assert.equal(decoder.decode((await reader.some(3))!), "hel");
  assert.equal(decoder.decode((await reader.some(100))!), "lo", "the rest of the buffer, no read");
  assert.equal(source.reads, 1);
  assert.equal(decoder.decode((await reader.some(100))!), " worl");
  assert.equal(decoder.decode((await reader.some(100))!), "d");
  assert.equal(await reader.some(100), null);
});

Deno.test("BufferedReader.exactly fills its target from the buffer, then straight from the source", async () => {
  const source = new ScriptedSource("head\r\n" + "0123456789".repeat(10), 7);
  const reader = new BufferedReader(source, 16);
  assert.equal(await reader.line(100, "a line"), "head");
  const target = new Uint8Array(100);
  assert.equal(await reader.exactly(target), true);
  assert.equal(decoder.decode(target), "0123456789".repeat(10));
  assert.equal(reader.received, 106);
  assert.equal(reader.buffer.length, 16, "the body did not go through the buffer");

  const short = new BufferedReader(new ScriptedSource("abc", 1));
  assert.equal(await short.exactly(new Uint8Array(4)), false, "the source ended first");
  assert.equal(await new BufferedReader(new ScriptedSource("")).exactly(new Uint8Array(0)), true);
});

Deno.test("BufferedReader.watch starts a read that the next fill takes", async () => {
  const source = new ScriptedSource("HTTP/1.1 200 OK\r\n");
  const reader = new BufferedReader(source);
  const watched = reader.watch();
  assert.equal(source.reads, 1, "the read started at once");
  assert.equal(await watched, true, "it brought bytes");
  assert.equal(reader.available, 0, "not taken until fill");
  assert.equal(await reader.line(100, "a line"), "HTTP/1.1 200 OK");
  assert.equal(source.reads, 1, "fill took the watched read instead of reading again");
  assert.equal(reader.received, 17);

  const ended = new BufferedReader(new ScriptedSource(""));
  assert.equal(await ended.watch(), false, "the source ended");
  assert.equal(await ended.fill(), false);
});

Deno.test("BufferedReader.exactly refuses to read past a pending watch", async () => {
  const reader = new BufferedReader(new ScriptedSource("abcdef"));
  const watched = reader.watch();
  await assert.rejects(reader.exactly(new Uint8Array(3)), /a read is already pending/);
  assert.equal(await watched, true);
});

/** Every head of `reader` (`bufferedHead`, filling until each is whole). */
async function heads(reader: BufferedReader, max = 1024): Promise<string[]> {
  const out: string[] = [];
  for (;;) {
    const head = reader.bufferedHead(max, "a head");
    if (head !== undefined) {
      out.push(head);
      continue;
    }
    if (!(await reader.fill())) return out;
  }
}

Deno.test("BufferedReader.bufferedHead takes each head up to its empty line, whatever the reads' sizes", async () => {
  const text =
    "HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n\r\nHTTP/1.1 204 No Content\n\nHTTP/1.1 100 X\r\n\r\n";
  const expected = [
    "HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r",
    "HTTP/1.1 204 No Content",
    "HTTP/1.1 100 X\r",
  ];
  for (const sizes of [Infinity, 1, 2, 3, 5, growing]) {
    const reader = new BufferedReader(new ScriptedSource(text, sizes), 16);
    assert.deepEqual(await heads(reader), expected, `reads of ${String(sizes)}`);
  }
});

Deno.test("BufferedReader.bufferedHead: line ends an earlier answer left in the buffer count for nothing", async () => {
  // The first answer fills the buffer; the second arrives in a later read, into a buffer whose
  // old bytes (past the new end) still hold line ends.
  const first = "HTTP/1.1 200 OK\r\nA: 1\r\n\r\n" + "x".repeat(20) + "\r\n\r\n";
  const second = "HTTP/1.1 201 Created\r\nB: 2\r\n\r\n";
  const reader = new BufferedReader(
    new ScriptedSource(first + second, (i) => (i === 0 ? first.length : Infinity)),
    64,
  );
  assert.ok(await reader.fill());
  assert.equal(reader.bufferedHead(1024, "a head"), "HTTP/1.1 200 OK\r\nA: 1\r");
  reader.buffered(Infinity); // the first answer's body
  // As the pool does with an idle connection: a read starts at the buffer's front, over the
  // old bytes, before the next request looks for its head.
  const watched = reader.watch();
  assert.equal(reader.bufferedHead(1024, "a head"), undefined, "nothing buffered: no head");
  assert.deepEqual(await heads(reader), ["HTTP/1.1 201 Created\r\nB: 2\r"]);
  assert.equal(await watched, true);
});

Deno.test("BufferedReader.bufferedHead refuses a head over its limit, decodes bytes past ASCII one a character", async () => {
  const reader = new BufferedReader(
    new ScriptedSource(`HTTP/1.1 200 OK\r\nA: ${"y".repeat(100)}`),
    16,
  );
  await assert.rejects(heads(reader, 64), LineTooLong);
  const latin = new BufferedReader(new ScriptedSource(new Uint8Array([65, 0xe9, 10, 10])));
  assert.deepEqual(await heads(latin), ["A\u00e9"]);
});
