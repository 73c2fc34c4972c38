/**
 * One suite run against both upstream clients (Switchyard's own and the one over `fetch`),
 * against a server that writes exact bytes: what a provider reads must not depend on which
 * client `SWITCHYARD_HTTP_CLIENT` (or a proxy, or tracing) picked.
 *
 * Where fetch alone would differ, both behave as the native client does: a redirect is the
 * answer (its `location` is not followed), an answer compressed against
 * `accept-encoding: identity` is refused, and so is one under a transfer coding besides chunked.
 */
import assert from "node:assert/strict";
import { ContentEncodingRefused } from "../../../src/http/client/content_encoding.ts";
import { FetchHttpClient } from "../../../src/http/client/fetch.ts";
import { NativeHttpClient } from "../../../src/http/client/native.ts";
import { TransferEncodingRefused } from "../../../src/http/client/transfer_encoding.ts";
import type { ClientRequest, ClientResponse, HttpClient } from "../../../src/http/client/types.ts";
import { answer, type RawRequest, RawServer, within } from "./raw_server.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The clients the suite runs against. */
const CLIENTS: [name: string, make: () => HttpClient][] = [
  ["native", () => new NativeHttpClient()],
  ["fetch", () => new FetchHttpClient()],
];

/** A request with no headers and a signal nobody fires, `init` on top (bounded in time). */
function call(
  client: HttpClient,
  url: string,
  init: Partial<ClientRequest> = {},
): Promise<ClientResponse> {
  return within(
    client.request({
      method: "GET",
      url,
      headers: {},
      signal: new AbortController().signal,
      ...init,
    }),
    5000,
    `the answer to ${url}`,
  );
}

/** The whole body, read piece by piece (bounded in time). */
function drain(response: ClientResponse): Promise<string> {
  return within(
    (async () => {
      const pieces: Uint8Array[] = [];
      for (let piece = await response.read(); piece !== null; piece = await response.read()) {
        pieces.push(piece.slice());
      }
      let text = "";
      for (const piece of pieces) text += decoder.decode(piece, { stream: true });
      return text + decoder.decode();
    })(),
    5000,
    "the body",
  );
}

/** A server answering each request with `reply(request)` (bytes sent as they are; `close`
 * then ends the connection), connection after connection. */
function rawServer(
  reply: (request: RawRequest) => { bytes: string | Uint8Array; close?: boolean },
): RawServer & { requests: RawRequest[] } {
  const requests: RawRequest[] = [];
  const server = new RawServer(async (peer) => {
    for (let request = await peer.request(); request !== null; request = await peer.request()) {
      requests.push(request);
      const { bytes, close } = reply(request);
      await peer.send(bytes);
      if (close) return peer.close();
    }
  });
  return Object.assign(server, { requests });
}

/** `text` gzipped. */
async function gzip(text: string): Promise<Uint8Array> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

for (const [name, make] of CLIENTS) {
  Deno.test(`[${name}] a Content-Length answer: status, fields, length and body`, async () => {
    await using server = rawServer(() => ({
      bytes: answer("201 Created", ["Content-Length: 13", "X-Answer: yes"], "héllo wörld"),
    }));
    const client = make();
    const response = await call(client, server.url("/v1/x?y=1"));
    assert.equal(response.status, 201);
    assert.equal(response.headers.get("x-answer"), "yes");
    assert.equal(response.length, 13);
    assert.equal(await drain(response), "héllo wörld");
    assert.equal(server.requests[0]?.target, "/v1/x?y=1");
    client.close();
  });

  Deno.test(`[${name}] a chunked answer (extensions, a trailer) is read whole`, async () => {
    await using server = rawServer(() => ({
      bytes: answer(
        "200 OK",
        ["Transfer-Encoding: chunked"],
        "5\r\nhello\r\n1;ext=1\r\n \r\n9\r\nwörld!!!\r\n0\r\nX-Trailer: t\r\n\r\n",
      ),
    }));
    const client = make();
    const response = await call(client, server.url());
    assert.equal(response.status, 200);
    assert.equal(response.length, null);
    assert.equal(await drain(response), "hello wörld!!!");
    client.close();
  });

  Deno.test(`[${name}] an answer delimited by the close is read to the close`, async () => {
    await using server = rawServer(() => ({
      bytes: answer("200 OK", ["Content-Type: text/plain"], "until the end"),
      close: true,
    }));
    const client = make();
    const response = await call(client, server.url());
    assert.equal(response.length, null);
    assert.equal(await drain(response), "until the end");
    // The next call needs a connection of its own.
    assert.equal(await drain(await call(client, server.url())), "until the end");
    assert.equal(server.accepted, 2);
    client.close();
  });

  Deno.test(`[${name}] kept-alive: sequential calls share one connection, whatever the framing`, async () => {
    let n = 0;
    await using server = rawServer(() => {
      n++;
      return {
        bytes: n % 2 === 0
          ? answer("200 OK", ["Transfer-Encoding: chunked"], `3\r\n#${n}#\r\n0\r\n\r\n`)
          : answer("200 OK", ["Content-Length: 3"], `#${n}#`),
      };
    });
    const client = make();
    for (let i = 1; i <= 4; i++) {
      const response = await call(client, server.url(`/${i}`), {
        method: "POST",
        body: `call ${i}`,
      });
      assert.equal(await drain(response), `#${i}#`);
    }
    assert.equal(server.accepted, 1, "one connection for the four calls");
    assert.deepEqual(server.requests.map((r) => decoder.decode(r.body)), [
      "call 1",
      "call 2",
      "call 3",
      "call 4",
    ]);
    client.close();
  });

  Deno.test(`[${name}] an error status comes with its body and fields, and keeps the connection`, async () => {
    const body = JSON.stringify({ error: { message: "slow down", type: "rate_limit" } });
    await using server = rawServer(() => ({
      bytes: answer(
        "429 Too Many Requests",
        [
          `Content-Length: ${encoder.encode(body).length}`,
          "Content-Type: application/json",
          "Retry-After: 7",
        ],
        body,
      ),
    }));
    const client = make();
    for (let i = 0; i < 2; i++) {
      const response = await call(client, server.url());
      assert.equal(response.status, 429);
      assert.equal(response.headers.get("retry-after"), "7");
      assert.deepEqual(await response.text(10_000), { text: body, complete: true });
    }
    assert.equal(server.accepted, 1);
    client.close();
  });

  for (const status of ["301 Moved Permanently", "302 Found", "307 Temporary Redirect"]) {
    Deno.test(`[${name}] a redirect (${status}) is the answer: its location is not followed`, async () => {
      await using server = rawServer((request) => ({
        bytes: request.target === "/moved"
          ? answer("200 OK", ["Content-Length: 11"], "the target!")
          : answer(status, ["Location: /moved", "Content-Length: 5"], "moved"),
      }));
      const client = make();
      const response = await call(client, server.url("/v1/chat"), {
        method: "POST",
        headers: { "x-api-key": "secret" },
        body: "{}",
      });
      assert.equal(response.status, Number(status.slice(0, 3)));
      assert.equal(response.headers.get("location"), "/moved");
      assert.equal(await drain(response), "moved");
      assert.deepEqual(server.requests.map((r) => r.target), ["/v1/chat"], "never /moved");
      client.close();
    });
  }

  Deno.test(`[${name}] asks for identity, whatever the caller's headers say`, async () => {
    await using server = rawServer(() => ({
      bytes: answer("200 OK", ["Content-Length: 2"], "ok"),
    }));
    const client = make();
    for (const given of ["gzip, br", "GZIP", "*"]) {
      for (const fieldName of ["accept-encoding", "Accept-Encoding"]) {
        await drain(await call(client, server.url(), { headers: { [fieldName]: given } }));
      }
    }
    await drain(await call(client, server.url()));
    for (const request of server.requests) {
      const sent = request.fields.filter(([n]) => n === "accept-encoding").map(([, v]) => v);
      assert.deepEqual(sent, ["identity"]);
    }
    assert.equal(server.requests.length, 7);
    client.close();
  });

  Deno.test(`[${name}] a gzipped answer is refused with an error naming its encoding, never handed on`, async () => {
    const packed = await gzip(`{"choices":[{"message":{"content":"hi"}}]}`);
    const head = (fields: string[]) =>
      encoder.encode(`HTTP/1.1 200 OK\r\n${fields.map((f) => `${f}\r\n`).join("")}\r\n`);
    await using server = rawServer((request) => {
      const fields = ["Content-Type: application/json", "Content-Encoding: gzip"];
      if (request.target === "/chunked") {
        const size = encoder.encode(`${packed.length.toString(16)}\r\n`);
        const bytes = new Uint8Array([
          ...head([...fields, "Transfer-Encoding: chunked"]),
          ...size,
          ...packed,
          ...encoder.encode("\r\n0\r\n\r\n"),
        ]);
        return { bytes };
      }
      if (request.target === "/error") {
        return {
          bytes: new Uint8Array([
            ...encoder.encode(
              `HTTP/1.1 500 Oops\r\nContent-Encoding: gzip\r\nContent-Length: ${packed.length}\r\n\r\n`,
            ),
            ...packed,
          ]),
        };
      }
      return {
        bytes: new Uint8Array([
          ...head([...fields, `Content-Length: ${packed.length}`]),
          ...packed,
        ]),
      };
    });
    const client = make();
    for (const path of ["/length", "/chunked", "/error"]) {
      await assert.rejects(
        call(client, server.url(path), { headers: { "accept-encoding": "gzip" } }),
        (e: unknown) => {
          assert.ok(e instanceof ContentEncodingRefused, String(e));
          assert.equal(e.encoding, "gzip");
          assert.match(e.message, /Content-Encoding "gzip".*accept-encoding: identity/);
          return true;
        },
        path,
      );
    }
    client.close();
  });

  Deno.test(`[${name}] Content-Encoding: identity (or none on a body-less answer) is no refusal`, async () => {
    await using server = rawServer((request) => ({
      bytes: request.target === "/empty"
        ? answer("204 No Content", ["Content-Encoding: gzip"])
        : answer("200 OK", ["Content-Encoding: Identity", "Content-Length: 5"], "plain"),
    }));
    const client = make();
    assert.equal(await drain(await call(client, server.url("/plain"))), "plain");
    const empty = await call(client, server.url("/empty"));
    assert.equal(empty.status, 204);
    assert.equal(await drain(empty), "");
    client.close();
  });

  Deno.test(`[${name}] a transfer coding besides chunked is refused, naming it, and its connection is not reused`, async () => {
    const packed = await gzip(`{"choices":[{"message":{"content":"hi"}}]}`);
    const chunk = (bytes: Uint8Array) =>
      new Uint8Array([
        ...encoder.encode(`${bytes.length.toString(16)}\r\n`),
        ...bytes,
        ...encoder.encode("\r\n0\r\n\r\n"),
      ]);
    const head = (fields: string[]) =>
      encoder.encode(`HTTP/1.1 200 OK\r\n${fields.map((f) => `${f}\r\n`).join("")}\r\n`);
    /** Each path's fields and body; a coding that does not end in chunked is sent until the
     * close, as a server that means it would. */
    const answers: Record<string, { fields: string[]; body: Uint8Array; close?: boolean }> = {
      "/gzip-chunked": {
        fields: ["Content-Type: application/json", "Transfer-Encoding: gzip, chunked"],
        body: chunk(packed),
      },
      "/gzip-then-chunked": {
        fields: ["Transfer-Encoding: gzip", "Transfer-Encoding: chunked"],
        body: chunk(packed),
      },
      "/chunked-gzip": { fields: ["Transfer-Encoding: chunked, gzip"], body: packed, close: true },
      "/identity": {
        fields: ["Transfer-Encoding: identity"],
        body: encoder.encode("{}"),
        close: true,
      },
      "/unknown": {
        fields: ["Transfer-Encoding: x-switchyard-unknown"],
        body: encoder.encode("?!"),
        close: true,
      },
      "/chunked-twice": {
        fields: ["Transfer-Encoding: chunked, chunked"],
        body: chunk(chunk(encoder.encode("{}"))),
      },
      "/plain": { fields: ["Content-Length: 2"], body: encoder.encode("ok") },
    };
    await using server = rawServer((request) => {
      const { fields, body, close } = answers[request.target]!;
      return { bytes: new Uint8Array([...head(fields), ...body]), close: close ?? false };
    });
    const client = make();
    const codings: Record<string, string> = {
      "/gzip-chunked": "gzip, chunked",
      "/gzip-then-chunked": "gzip, chunked",
      "/chunked-gzip": "chunked, gzip",
      "/identity": "identity",
      "/unknown": "x-switchyard-unknown",
      "/chunked-twice": "chunked, chunked",
    };
    for (const [path, coding] of Object.entries(codings)) {
      await assert.rejects(
        call(client, server.url(path)),
        (e: unknown) => {
          assert.ok(e instanceof TransferEncodingRefused, String(e));
          assert.equal(e.coding, coding);
          assert.ok(e.message.includes(`Transfer-Encoding ${JSON.stringify(coding)}`), e.message);
          return true;
        },
        path,
      );
      // The next call is answered whole. The native client closed the refused connection, so
      // the call has one of its own; fetch may keep one whose chunks it had read to their end
      // (its pool is its own), which leaves nothing of the refused answer to be read as this one.
      const accepted = server.accepted;
      assert.equal(await drain(await call(client, server.url("/plain"))), "ok", path);
      if (name === "native") {
        assert.equal(server.accepted, accepted + 1, `${path}: a new connection after the refusal`);
      }
    }
    client.close();
  });

  Deno.test(`[${name}] Transfer-Encoding: chunked with a Content-Length too is read chunked, its connection closed after`, async () => {
    await using server = rawServer((request) => ({
      bytes: request.target === "/both"
        ? answer(
          "200 OK",
          ["Content-Length: 3", "Transfer-Encoding: Chunked"],
          "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
        )
        : answer("200 OK", ["Content-Length: 2"], "ok"),
    }));
    const client = make();
    const response = await call(client, server.url("/both"));
    assert.equal(response.length, null, "the Content-Length is not the body's length");
    assert.equal(await drain(response), "hello world");
    // Whatever came after the chunks could be an answer smuggled in: a new connection.
    assert.equal(await drain(await call(client, server.url("/plain"))), "ok");
    assert.equal(await drain(await call(client, server.url("/plain"))), "ok");
    assert.equal(server.accepted, 2, "a connection for /both, one for the two calls after");
    client.close();
  });
}
