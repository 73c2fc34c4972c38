import assert from "node:assert/strict";
import { headEnd, HeadError, MAX_FIELDS, parseHead } from "../../../src/http/server/head.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const parse = (text: string) => parseHead(bytes(text));
function refused(text: string, status: number, message: RegExp): void {
  assert.throws(() => parse(text), (e) => {
    assert.ok(e instanceof HeadError);
    assert.equal(e.status, status, text);
    assert.match(e.message, message);
    return true;
  });
}

Deno.test("headEnd finds the blank line, in one piece or split, and a bare LF one", () => {
  const head = bytes("GET / HTTP/1.1\r\nhost: x\r\n\r\nNEXT");
  assert.equal(headEnd(head, 0, head.length), head.length - 4);
  assert.equal(headEnd(head, 0, head.length - 5), -1);
  assert.equal(headEnd(head, 20, head.length), head.length - 4);
  const bare = bytes("GET / HTTP/1.1\nhost: x\n\n");
  assert.equal(headEnd(bare, 0, bare.length), bare.length);
});

Deno.test("parseHead reads the request line, fields, framing and connection options", () => {
  const head = parse(
    "POST /v1/chat?x=1 HTTP/1.1\r\nHost: a.example:8000\r\nContent-Length: 12\r\n" +
      "X-Thing:  padded value \t\r\nExpect: 100-continue\r\n\r\n",
  );
  assert.equal(head.method, "POST");
  assert.equal(head.target, "/v1/chat?x=1");
  assert.equal(head.minor, 1);
  assert.equal(head.host, "a.example:8000");
  assert.deepEqual(head.body, { kind: "length", length: 12 });
  assert.deepEqual(head.fields[2], ["X-Thing", "padded value"]);
  assert.equal(head.keepAlive, true);
  assert.equal(head.expectContinue, true);

  const chunked = parse(
    "POST / HTTP/1.1\r\ntransfer-encoding: Chunked\r\nconnection: close\r\n\r\n",
  );
  assert.deepEqual(chunked.body, { kind: "chunked" });
  assert.equal(chunked.keepAlive, false);

  const old = parse("GET / HTTP/1.0\r\n\r\n");
  assert.equal(old.minor, 0);
  assert.equal(old.keepAlive, false);
  assert.equal(old.host, null);
  assert.equal(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").keepAlive, true);
  assert.deepEqual(parse("POST / HTTP/1.1\r\ncontent-length: 0\r\n\r\n").body, { kind: "none" });
  assert.deepEqual(
    parse("POST / HTTP/1.1\r\ncontent-length: 5, 5\r\n\r\n").body,
    { kind: "length", length: 5 },
  );
  assert.equal(parse("GET http://h.example/p HTTP/1.1\r\n\r\n").target, "http://h.example/p");
});

Deno.test("parseHead refuses what two parties could read two ways", () => {
  refused("GET / HTTP/1.1\nhost: x\n\n", 400, /CRLF/);
  refused("GET  / HTTP/1.1\r\n\r\n", 400, /request line/);
  refused("GET / HTTP/1.1\r\nhost : x\r\n\r\n", 400, /field name/);
  refused("GET / HTTP/1.1\r\nhost: x\r\n folded\r\n\r\n", 400, /header field/);
  refused("GET / HTTP/1.1\r\nx: a\x00b\r\n\r\n", 400, /value of header x/);
  refused("GET / HTTP/1.1\r\nx: a\rb\r\n\r\n", 400, /value of header x/);
  refused("POST / HTTP/1.1\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\n", 400, /conflicting/);
  refused("POST / HTTP/1.1\r\ncontent-length: -1\r\n\r\n", 400, /Content-Length/);
  refused("POST / HTTP/1.1\r\ncontent-length: 0x10\r\n\r\n", 400, /Content-Length/);
  refused(
    "POST / HTTP/1.1\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n",
    400,
    /both/,
  );
  refused("POST / HTTP/1.1\r\ntransfer-encoding: gzip, chunked\r\n\r\n", 501, /gzip/);
  refused("POST / HTTP/1.1\r\ntransfer-encoding: chunked, gzip\r\n\r\n", 501, /not supported/);
  refused(
    "POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\ntransfer-encoding: chunked\r\n\r\n",
    501,
    /not supported/,
  );
  refused("POST / HTTP/1.0\r\ntransfer-encoding: chunked\r\n\r\n", 400, /HTTP\/1\.0/);
  refused("GET / HTTP/1.1\r\nhost: a\r\nhost: b\r\n\r\n", 400, /Host/);
  refused("GET / HTTP/2.0\r\n\r\n", 505, /version/);
  refused("GET / HTTQ/1.1\r\n\r\n", 400, /version/);
  refused("GET * HTTP/1.1\r\n\r\n", 400, /request-target/);
  refused("G(T / HTTP/1.1\r\n\r\n", 400, /method/);
  const many = Array.from({ length: MAX_FIELDS + 1 }, (_, i) => `x${i}: y\r\n`).join("");
  refused(`GET / HTTP/1.1\r\n${many}\r\n`, 431, /too many/);
});
