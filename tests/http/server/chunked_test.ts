import assert from "node:assert/strict";
import { ChunkedDecoder, ChunkedError } from "../../../src/http/server/chunked.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (parts: Uint8Array[]) =>
  new TextDecoder().decode(new Uint8Array(parts.flatMap((p) => [...p])));

/** Decodes `wire` cut into pieces of `size` bytes; the data and the bytes left over. */
function decode(wire: string, size: number): { data: string; rest: string; done: boolean } {
  const decoder = new ChunkedDecoder();
  const all = bytes(wire);
  const data: Uint8Array[] = [];
  let rest = "";
  for (let at = 0; at < all.length; at += size) {
    const piece = all.subarray(at, at + size);
    const used = decoder.decode(piece, (d) => data.push(d.slice()));
    if (used < piece.length) {
      rest = new TextDecoder().decode(all.subarray(at + used));
      break;
    }
  }
  return { data: text(data), rest, done: decoder.done };
}

Deno.test("ChunkedDecoder reads a body cut at every byte, with extensions and trailers", () => {
  const wire = "5;name=value\r\nhello\r\n7\r\n, world\r\n0\r\nx-trailer: 1\r\n\r\nGET / HTTP/1.1";
  for (const size of [1, 2, 3, 7, 100]) {
    const { data, rest, done } = decode(wire, size);
    assert.equal(data, "hello, world", `pieces of ${size}`);
    assert.equal(rest, "GET / HTTP/1.1", `pieces of ${size}`);
    assert.ok(done);
  }
  assert.deepEqual(decode("A\r\n0123456789\r\n0\r\n\r\n", 4), {
    data: "0123456789",
    rest: "",
    done: true,
  });
  assert.equal(decode("5\r\nhel", 100).done, false);
});

Deno.test("ChunkedDecoder refuses malformed framing", () => {
  for (
    const wire of [
      "x\r\n",
      "5\nhello\r\n",
      "5\r\nhello!\r\n",
      "5\r\nhelloXY",
      "1234567890123456\r\n",
      "0\r\n\n",
      "0\r\nx: y\n\r\n",
      `1;${"e".repeat(5000)}\r\n`,
    ]
  ) {
    assert.throws(() => decode(wire, 3), ChunkedError, JSON.stringify(wire.slice(0, 20)));
  }
});
