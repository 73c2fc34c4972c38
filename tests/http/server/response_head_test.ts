import assert from "node:assert/strict";
import {
  chunk,
  DateField,
  latin1Bytes,
  reasonPhrase,
  responseHead,
} from "../../../src/http/server/response_head.ts";

const text = (bytes: Uint8Array) => new TextDecoder("latin1").decode(bytes);

Deno.test("chunk frames data with its size in hex, for every digit count", () => {
  for (const n of [1, 9, 15, 16, 255, 256, 4095, 4096, 65536, 1_048_577]) {
    const framed = text(chunk(new Uint8Array(n).fill(97)));
    assert.equal(framed, `${n.toString(16)}\r\n${"a".repeat(n)}\r\n`);
  }
});

Deno.test("responseHead writes the status, the handler's fields and the server's framing", () => {
  const headers = new Headers({ "content-type": "text/plain", "content-length": "99" });
  headers.append("set-cookie", "a=1");
  headers.append("set-cookie", "b=2");
  headers.set("connection", "keep-alive");
  const head = text(
    responseHead(
      201,
      "",
      headers,
      { kind: "length", length: 5 },
      true,
      "Sun, 29 Nov 2026 00:00:00 GMT",
    ),
  );
  assert.equal(
    head,
    "HTTP/1.1 201 Created\r\ncontent-type: text/plain\r\nset-cookie: a=1\r\nset-cookie: b=2\r\n" +
      "date: Sun, 29 Nov 2026 00:00:00 GMT\r\ncontent-length: 5\r\nconnection: close\r\n\r\n",
  );
  const chunked = text(responseHead(
    499,
    "",
    new Headers({ date: "x" }),
    { kind: "chunked" },
    false,
    "unused",
  ));
  assert.equal(
    chunked,
    "HTTP/1.1 499 Client Closed Request\r\ndate: x\r\ntransfer-encoding: chunked\r\n\r\n",
  );
  assert.equal(reasonPhrase(299), "");
});

Deno.test("header values are written as Latin-1 bytes", () => {
  assert.deepEqual([...latin1Bytes("a\u00e9")], [97, 0xe9]);
});

Deno.test("DateField changes once a second", () => {
  const date = new DateField();
  assert.equal(date.value(0), "Thu, 01 Jan 1970 00:00:00 GMT");
  assert.equal(date.value(999), "Thu, 01 Jan 1970 00:00:00 GMT");
  assert.equal(date.value(1000), "Thu, 01 Jan 1970 00:00:01 GMT");
});

Deno.test("responseHead with a body gives head and body in one buffer, Latin-1 values too", () => {
  const body = new TextEncoder().encode("{}");
  const ascii = text(
    responseHead(200, "", new Headers({ a: "b" }), { kind: "length", length: 2 }, false, "D", body),
  );
  assert.equal(ascii, "HTTP/1.1 200 OK\r\na: b\r\ndate: D\r\ncontent-length: 2\r\n\r\n{}");
  const latin = responseHead(
    200,
    "",
    new Headers({ a: "caf\u00e9" }),
    { kind: "length", length: 2 },
    false,
    "D",
    body,
  );
  assert.equal(
    text(latin),
    "HTTP/1.1 200 OK\r\na: caf\u00e9\r\ndate: D\r\ncontent-length: 2\r\n\r\n{}",
  );
});
