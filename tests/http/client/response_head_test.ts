import assert from "node:assert/strict";
import {
  bodyFraming,
  field,
  HttpProtocolError,
  keepsAlive,
  parseFieldLine,
  parseStatusLine,
  type ResponseHead,
} from "../../../src/http/client/response_head.ts";

/** A head of `status` with `fields` (`name: value` lines), HTTP/1.`minor`. */
function head(status: number, fields: string[] = [], minor = 1): ResponseHead {
  return { minor, status, statusText: "", fields: fields.map(parseFieldLine) };
}

Deno.test("parseStatusLine reads the version, the status and the reason", () => {
  assert.deepEqual(parseStatusLine("HTTP/1.1 200 OK"), { minor: 1, status: 200, statusText: "OK" });
  assert.deepEqual(parseStatusLine("HTTP/1.0 404 Not Found"), {
    minor: 0,
    status: 404,
    statusText: "Not Found",
  });
  assert.deepEqual(parseStatusLine("HTTP/1.1 204"), { minor: 1, status: 204, statusText: "" });
  assert.deepEqual(parseStatusLine("HTTP/1.1 200 "), { minor: 1, status: 200, statusText: "" });
  assert.equal(
    parseStatusLine("HTTP/1.1 429 Too  Many: Requests").statusText,
    "Too  Many: Requests",
  );
});

Deno.test("parseStatusLine refuses anything that is not an HTTP/1.x status line", () => {
  for (
    const line of [
      "",
      "HTTP/1.1",
      "HTTP/1.1 20 OK",
      "HTTP/1.1 2000 OK",
      "HTTP/1.1 abc OK",
      "HTTP/1.1  200 OK",
      "HTTP/1.2 200 OK",
      "HTTP/2 200",
      "HTTP/2.0 200 OK",
      "http/1.1 200 OK",
      " HTTP/1.1 200 OK",
      "ICY 200 OK",
      "HTTP/1.1\t200 OK",
    ]
  ) {
    assert.throws(() => parseStatusLine(line), HttpProtocolError, JSON.stringify(line));
  }
});

Deno.test("parseFieldLine lower-cases the name and trims the value", () => {
  assert.deepEqual(parseFieldLine("Content-Type: text/plain"), ["content-type", "text/plain"]);
  assert.deepEqual(parseFieldLine("X-Spaced: \t padded \t"), ["x-spaced", "padded"]);
  assert.deepEqual(parseFieldLine("X-Empty:"), ["x-empty", ""]);
  assert.deepEqual(parseFieldLine("Location: http://h:1/a:b"), ["location", "http://h:1/a:b"]);
  assert.deepEqual(parseFieldLine("x-latin: caf\u00e9"), ["x-latin", "caf\u00e9"]);
  assert.deepEqual(parseFieldLine("!#$%&'*+.^_`|~: token"), ["!#$%&'*+.^_`|~", "token"]);
});

Deno.test("parseFieldLine refuses folded lines, names that are not tokens, and values with CR or NUL", () => {
  for (
    const line of [
      " folded: continuation",
      "\tfolded",
      "no colon",
      ": no name",
      "Bad Name: v",
      "Name : space before the colon",
      "N\u00e4me: v",
      "(x): v",
      "x-cr: a\rb",
      "x-nul: a\0b",
    ]
  ) {
    assert.throws(() => parseFieldLine(line), HttpProtocolError, JSON.stringify(line));
  }
});

Deno.test("field gives the first value of a field", () => {
  const h = head(200, ["Set-Cookie: a=1", "Set-Cookie: b=2"]);
  assert.equal(field(h, "set-cookie"), "a=1");
  assert.equal(field(h, "missing"), null);
});

Deno.test("bodyFraming: no body after HEAD, 204, 304 and 1xx, whatever the head says", () => {
  const length = ["Content-Length: 10"];
  assert.deepEqual(bodyFraming(head(200, length), "HEAD"), { kind: "none" });
  assert.deepEqual(bodyFraming(head(200, ["Transfer-Encoding: chunked"]), "HEAD"), {
    kind: "none",
  });
  for (const status of [204, 304, 100, 103]) {
    assert.deepEqual(bodyFraming(head(status, length), "GET"), { kind: "none" }, `${status}`);
  }
});

Deno.test("bodyFraming: chunked when the last coding is chunked, until close otherwise", () => {
  assert.deepEqual(bodyFraming(head(200, ["Transfer-Encoding: chunked"]), "GET"), {
    kind: "chunked",
  });
  assert.deepEqual(bodyFraming(head(200, ["Transfer-Encoding: gzip, Chunked"]), "GET"), {
    kind: "chunked",
  });
  assert.deepEqual(
    bodyFraming(head(200, ["Transfer-Encoding: gzip", "Transfer-Encoding: chunked"]), "GET"),
    { kind: "chunked" },
    "the codings of repeated fields join",
  );
  assert.deepEqual(bodyFraming(head(200, ["Transfer-Encoding: chunked, gzip"]), "GET"), {
    kind: "close",
  });
  assert.deepEqual(
    bodyFraming(head(200, ["Transfer-Encoding: chunked", "Content-Length: 5"]), "POST"),
    { kind: "chunked" },
    "Transfer-Encoding wins over Content-Length",
  );
  assert.deepEqual(bodyFraming(head(200), "GET"), { kind: "close" }, "no length given");
});

Deno.test("bodyFraming: Content-Length, repeated with one value, or refused", () => {
  assert.deepEqual(bodyFraming(head(200, ["Content-Length: 0"]), "GET"), {
    kind: "length",
    bytes: 0,
  });
  assert.deepEqual(bodyFraming(head(404, ["Content-Length:  42 "]), "GET"), {
    kind: "length",
    bytes: 42,
  });
  assert.deepEqual(bodyFraming(head(200, ["Content-Length: 5", "Content-Length: 5"]), "GET"), {
    kind: "length",
    bytes: 5,
  });
  assert.deepEqual(bodyFraming(head(200, ["Content-Length: 5, 5"]), "GET"), {
    kind: "length",
    bytes: 5,
  });
  assert.deepEqual(bodyFraming(head(200, ["Content-Length: 999999999999999"]), "GET"), {
    kind: "length",
    bytes: 999999999999999,
  });
  for (
    const values of [
      ["5", "6"],
      ["5, 6"],
      ["abc"],
      ["-1"],
      ["+5"],
      ["1e3"],
      ["0x10"],
      [""],
      ["5,"],
      ["1 2"],
      ["1234567890123456"],
    ]
  ) {
    const h = head(200, values.map((v) => `Content-Length: ${v}`));
    assert.throws(() => bodyFraming(h, "GET"), HttpProtocolError, JSON.stringify(values));
  }
});

Deno.test("keepsAlive: HTTP/1.1 unless Connection: close; HTTP/1.0 only with keep-alive", () => {
  const length = { kind: "length", bytes: 3 } as const;
  assert.equal(keepsAlive(head(200, ["Content-Length: 3"]), length), true);
  assert.equal(keepsAlive(head(200, ["Connection: close"]), length), false);
  assert.equal(keepsAlive(head(200, ["Connection: Keep-Alive, CLOSE"]), length), false);
  assert.equal(keepsAlive(head(200, ["Connection: upgrade", "Connection: close"]), length), false);
  assert.equal(keepsAlive(head(204), { kind: "none" }), true);
  assert.equal(keepsAlive(head(200, ["Transfer-Encoding: chunked"]), { kind: "chunked" }), true);

  assert.equal(keepsAlive(head(200, [], 0), length), false, "HTTP/1.0 closes by default");
  assert.equal(keepsAlive(head(200, ["Connection: keep-alive"], 0), length), true);
  assert.equal(keepsAlive(head(200, ["Connection: Keep-Alive"], 0), length), true);
  assert.equal(keepsAlive(head(200, ["Connection: keep-alive, close"], 0), length), false);
});

Deno.test("keepsAlive: never after a body delimited by the close, or framed both ways", () => {
  assert.equal(keepsAlive(head(200), { kind: "close" }), false);
  assert.equal(keepsAlive(head(200, ["Connection: keep-alive"], 0), { kind: "close" }), false);
  const both = head(200, ["Transfer-Encoding: chunked", "Content-Length: 5"]);
  assert.equal(keepsAlive(both, bodyFraming(both, "GET")), false);
});
