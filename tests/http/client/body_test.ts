import assert from "node:assert/strict";
import {
  BodyCut,
  type BodyReader,
  bodyReader,
  ChunkedBody,
  LengthBody,
} from "../../../src/http/client/body.ts";
import { BufferedReader, LineTooLong } from "../../../src/http/client/buffered_reader.ts";
import { HttpProtocolError } from "../../../src/http/client/response_head.ts";
import { growing, latin1, type ReadSizes, ScriptedSource } from "./scripted_source.ts";

/** Every piece of `body` as text (each copied before the next read). */
async function pieces(body: BodyReader): Promise<string[]> {
  const out: string[] = [];
  for (let piece = await body.next(); piece !== null; piece = await body.next()) {
    out.push(latin1(piece));
  }
  return out;
}

/** A chunked body over `text`, read `sizes` bytes at a time. */
function chunked(text: string, sizes: ReadSizes = Infinity, bytes = 8 * 1024) {
  const source = new ScriptedSource(text, sizes);
  const reader = new BufferedReader(source, bytes);
  return { source, reader, body: new ChunkedBody(reader) };
}

/** A chunked body of several chunks, an extension and trailers, and the next answer's bytes. */
const WIRE = "5\r\nhello\r\n" +
  "1;ext=1\r\n,\r\n" +
  'A ; name="quoted;value" ; flag\r\n world 012\r\n' +
  "000\r\n" +
  "X-Trailer: yes\r\nAnother: one\r\n\r\n";
const DATA = "hello, world 012";
const NEXT = "HTTP/1.1 200 OK\r\n";

Deno.test("ChunkedBody reads the same data split at every byte boundary (1, 2, 3… bytes a read; every fixed size)", async () => {
  const text = WIRE + NEXT;
  const check = async (sizes: ReadSizes, label: string) => {
    const { reader, body } = chunked(text, sizes, 4);
    assert.equal((await pieces(body)).join(""), DATA, label);
    assert.equal(body.done, true, label);
    assert.equal(await body.next(), null, `${label}: stays at its end`);
    // The trailers were read, and the bytes after the body left for the next answer.
    assert.equal(await reader.line(100, "a line"), "HTTP/1.1 200 OK", label);
  };
  await check(growing, "reads of 1, 2, 3… bytes");
  for (let size = 1; size <= text.length; size++) await check(size, `reads of ${size} bytes`);
  // Every split of the body into two reads.
  for (let at = 1; at < text.length; at++) {
    await check((i) => (i === 0 ? at : Infinity), `split after byte ${at}`);
  }
});

Deno.test("ChunkedBody returns several chunks that came in one read as one piece", async () => {
  const { source, body } = chunked("3\r\nabc\r\n3\r\ndef\r\n2\r\ngh\r\n0\r\n\r\n");
  assert.equal(latin1((await body.next())!), "abcdefgh", "every chunk of the read at once");
  assert.equal(body.done, true, "the last chunk and its trailers were in the same read");
  assert.equal(await body.next(), null);
  assert.equal(body.done, true);
  assert.equal(source.reads, 1);
});

Deno.test("ChunkedBody returns what one read brought and waits for no more", async () => {
  // The first read: two whole chunks and half of a third; the rest only on the next read.
  const first = "3\r\nabc\r\n3\r\ndef\r\n6\r\nghi";
  const { source, body } = chunked(
    first + "jkl\r\n0\r\n\r\n",
    (i) => (i === 0 ? first.length : 100),
  );
  assert.equal(latin1((await body.next())!), "abcdefghi");
  assert.equal(source.reads, 1, "no read after the first piece");
  assert.equal(latin1((await body.next())!), "jkl");
  assert.equal(await body.next(), null);
  assert.equal(body.done, true);
});

Deno.test("ChunkedBody reads the trailers after the last chunk", async () => {
  const { reader, body } = chunked("0\r\nA: 1\r\nB: 2\r\n\r\nrest");
  assert.equal(await body.next(), null);
  assert.equal(body.done, true);
  assert.equal(latin1(reader.buffered(10)), "rest");

  const trailers = Array.from({ length: 64 }, (_, i) => `t${i}: v\r\n`).join("");
  assert.deepEqual(await pieces(chunked(`1\r\nx\r\n0\r\n${trailers}\r\n`).body), ["x"]);
  const tooMany = chunked(`1\r\nx\r\n0\r\n${trailers}t64: v\r\n\r\n`).body;
  await assert.rejects(pieces(tooMany), /too many trailers/);
  const tooLong = chunked(`0\r\nt: ${"v".repeat(5000)}\r\n\r\n`).body;
  await assert.rejects(pieces(tooLong), LineTooLong);
});

Deno.test("ChunkedBody accepts chunk extensions, upper- and lower-case sizes, and bare LF lines", async () => {
  assert.deepEqual(
    (await pieces(chunked("a;x=y\r\n0123456789\r\nB;z\r\nabcdefghijk\r\n0;end=1\r\n\r\n").body))
      .join(""),
    "0123456789abcdefghijk",
  );
  assert.deepEqual(await pieces(chunked("3\nabc\n0\n\n").body), ["abc"]);
});

Deno.test("ChunkedBody refuses malformed chunk sizes", async () => {
  for (
    const size of ["", "g", "-1", "+1", "0x5", "1 2", "1234567890abc", ";ext", "5\u00a0"]
  ) {
    const { body } = chunked(`${size}\r\nhello\r\n0\r\n\r\n`);
    await assert.rejects(pieces(body), HttpProtocolError, JSON.stringify(size));
  }
  const { body } = chunked(`${"0".repeat(5000)}5\r\nhello\r\n0\r\n\r\n`);
  await assert.rejects(pieces(body), LineTooLong, "a size line over 4 KiB");
});

Deno.test("ChunkedBody refuses data not followed by CRLF", async () => {
  for (
    const text of [
      "3\r\nabcXY\r\n0\r\n\r\n",
      "3\r\nabc3\r\ndef\r\n0\r\n\r\n",
      "3\r\nabc \r\n0\r\n\r\n",
    ]
  ) {
    for (const sizes of [Infinity, 1] as const) {
      const { body } = chunked(text, sizes);
      await assert.rejects(pieces(body), /malformed chunk/, `${JSON.stringify(text)} by ${sizes}`);
    }
  }
});

Deno.test("ChunkedBody: a connection cut anywhere before the body's end is a BodyCut", async () => {
  const text = "5\r\nhello\r\n3\r\nabc\r\n0\r\nT: 1\r\n\r\n";
  for (let cut = 0; cut < text.length; cut++) {
    for (const sizes of [Infinity, 1] as const) {
      const { body } = chunked(text.slice(0, cut), sizes);
      await assert.rejects(pieces(body), BodyCut, `cut after ${cut} bytes, reads of ${sizes}`);
      assert.equal(body.done, false);
    }
  }
  // Mid-chunk: the data that came is given before the cut is noticed.
  const { body } = chunked("a\r\n01234", Infinity);
  assert.equal(latin1((await body.next())!), "01234");
  await assert.rejects(body.next(), BodyCut);
});

Deno.test("LengthBody reads a declared length as it comes and stops there", async () => {
  const source = new ScriptedSource("0123456789NEXT", 4);
  const reader = new BufferedReader(source);
  const body = new LengthBody(reader, 10);
  assert.equal(body.left, 10);
  assert.deepEqual(await pieces(body), ["0123", "4567", "89"]);
  assert.equal(body.done, true);
  assert.equal(body.left, 0);
  assert.equal(latin1(reader.buffered(10)), "NE", "the next answer's bytes stay buffered");
});

Deno.test("LengthBody.rest reads the rest into one new array", async () => {
  const reader = new BufferedReader(new ScriptedSource("head\n" + "x".repeat(1000) + "NEXT", 64));
  assert.equal(await reader.line(100, "a line"), "head");
  const body = new LengthBody(reader, 1000);
  assert.equal(latin1((await body.next())!).length, 59, "what the first read brought");
  const rest = await body.rest();
  assert.equal(rest.length, 941);
  assert.ok(rest.every((b) => b === 0x78));
  assert.equal(body.done, true);
  assert.equal(latin1((await reader.some(10))!), "NEXT");
});

Deno.test("LengthBody: a connection that ends early is a BodyCut, by next or by rest", async () => {
  const short = new LengthBody(new BufferedReader(new ScriptedSource("abc", 2)), 5);
  assert.equal(latin1((await short.next())!), "ab");
  assert.equal(latin1((await short.next())!), "c");
  await assert.rejects(short.next(), BodyCut);
  assert.equal(short.done, false);
  const rest = new LengthBody(new BufferedReader(new ScriptedSource("abc")), 5);
  await assert.rejects(rest.rest(), BodyCut);
  assert.equal(rest.done, false);
});

Deno.test("bodyReader: no body is done at once; a body until the close ends with the connection", async () => {
  const source = new ScriptedSource("ignored");
  const none = bodyReader(new BufferedReader(source), { kind: "none" });
  assert.equal(none.done, true);
  assert.equal(await none.next(), null);
  assert.equal(source.reads, 0, "nothing read");

  const close = bodyReader(new BufferedReader(new ScriptedSource("all of it", 3)), {
    kind: "close",
  });
  assert.deepEqual(await pieces(close), ["all", " of", " it"]);
  assert.equal(close.done, true);
  assert.equal(await close.next(), null);

  const length = bodyReader(new BufferedReader(new ScriptedSource("abcdef")), {
    kind: "length",
    bytes: 4,
  });
  assert.deepEqual(await pieces(length), ["abcd"]);
  const chunks = bodyReader(new BufferedReader(new ScriptedSource("1\r\na\r\n0\r\n\r\n")), {
    kind: "chunked",
  });
  assert.deepEqual(await pieces(chunks), ["a"]);
});
