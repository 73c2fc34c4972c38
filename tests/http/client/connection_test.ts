import assert from "node:assert/strict";
import { LineTooLong } from "../../../src/http/client/buffered_reader.ts";
import { Http1Connection } from "../../../src/http/client/connection.ts";
import { HttpProtocolError } from "../../../src/http/client/response_head.ts";
import { socketPair, within } from "./raw_server.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** An {@link Http1Connection} over a real socket whose other end sends `pieces` (one write
 * each) and then, unless `keepOpen`, closes; `run` gets the connection. */
async function withHead(
  pieces: string[],
  run: (connection: Http1Connection) => Promise<void>,
  keepOpen = false,
): Promise<void> {
  const { client, server } = await socketPair();
  const connection = new Http1Connection(client);
  const sending = (async () => {
    for (const piece of pieces) {
      const bytes = encoder.encode(piece);
      for (let at = 0; at < bytes.length;) at += await server.write(bytes.subarray(at));
    }
    if (!keepOpen) server.close();
  })();
  try {
    await run(connection);
  } finally {
    connection.close();
    await sending.catch(() => {});
    if (keepOpen) server.close();
  }
}

Deno.test("Http1Connection.readHead reads the status line and the fields, and leaves the body buffered", async () => {
  const text = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Two: a\r\nX-Two: b\r\n\r\nbody";
  await withHead([text], async (connection) => {
    const head = await connection.readHead();
    assert.deepEqual(head, {
      minor: 1,
      status: 200,
      statusText: "OK",
      fields: [["content-type", "text/plain"], ["x-two", "a"], ["x-two", "b"]],
    });
    const body = await within(connection.reader.some(100), 2000, "the body");
    assert.equal(decoder.decode(body!), "body");
  });
});

Deno.test("Http1Connection.readHead reads a head sent a byte a write", async () => {
  const text = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
  await withHead([...text], async (connection) => {
    const head = await within(connection.readHead(), 2000, "the head");
    assert.equal(head?.status, 404);
    assert.deepEqual(head?.fields, [["content-length", "0"]]);
  });
});

Deno.test("Http1Connection.readHead skips 100 Continue and 103 Early Hints", async () => {
  const text = "HTTP/1.1 100 Continue\r\n\r\n" +
    "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n" +
    "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok";
  await withHead([text], async (connection) => {
    const head = await connection.readHead();
    assert.equal(head?.status, 201);
    assert.deepEqual(head?.fields, [["content-length", "2"]], "the interim fields are not kept");
  });
});

Deno.test("Http1Connection.readHead refuses 101 Switching Protocols, and more than 8 interim heads", async () => {
  const upgrade = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n";
  await withHead([upgrade], async (connection) => {
    await assert.rejects(connection.readHead(), HttpProtocolError);
  });
  const nine = "HTTP/1.1 102 Processing\r\n\r\n".repeat(9) + "HTTP/1.1 200 OK\r\n\r\n";
  await withHead([nine], async (connection) => {
    await assert.rejects(connection.readHead(), /too many informational/);
  });
  const eight = "HTTP/1.1 102 Processing\r\n\r\n".repeat(8) + "HTTP/1.1 200 OK\r\n\r\n";
  await withHead([eight], async (connection) => {
    assert.equal((await connection.readHead())?.status, 200);
  });
});

Deno.test("Http1Connection.readHead takes 256 fields and refuses 257", async () => {
  const fields = (n: number) => Array.from({ length: n }, (_, i) => `x-${i}: ${i}\r\n`).join("");
  await withHead([`HTTP/1.1 200 OK\r\n${fields(256)}\r\n`], async (connection) => {
    assert.equal((await connection.readHead())?.fields.length, 256);
  });
  await withHead([`HTTP/1.1 200 OK\r\n${fields(257)}\r\n`], async (connection) => {
    await assert.rejects(connection.readHead(), /more than 256 header fields/);
  });
});

Deno.test("Http1Connection.readHead refuses a head over 64 KiB, in one line or in many", async () => {
  const field = `x-big: ${"v".repeat(1000)}\r\n`;
  // 64 fields of 1 009 bytes, and the status line: under 64 KiB.
  await withHead([`HTTP/1.1 200 OK\r\n${field.repeat(64)}\r\n`], async (connection) => {
    assert.equal((await connection.readHead())?.fields.length, 64);
  });
  // 66 of them: over. The connection is still open (the server sent no end): the limit, not
  // the end of the stream, stops the read.
  await withHead(
    [`HTTP/1.1 200 OK\r\n${field.repeat(66)}`],
    async (connection) => {
      await assert.rejects(within(connection.readHead(), 2000, "the refusal"), LineTooLong);
    },
    true,
  );
  await withHead(
    [`HTTP/1.1 200 ${"r".repeat(70 * 1024)}`],
    async (connection) => {
      await assert.rejects(within(connection.readHead(), 2000, "the refusal"), LineTooLong);
    },
    true,
  );
});

Deno.test("Http1Connection.readHead: an end before any byte is null, an end inside a head an error", async () => {
  await withHead([], async (connection) => {
    assert.equal(await connection.readHead(), null);
  });
  await withHead(["HTTP/1.1 200"], async (connection) => {
    await assert.rejects(connection.readHead(), /inside a response head/);
  });
  await withHead(["HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"], async (connection) => {
    await assert.rejects(connection.readHead(), /inside a response head/);
  });
  await withHead(["HTTP/1.1 100 Continue\r\n\r\n"], async (connection) => {
    await assert.rejects(connection.readHead(), /inside a response head/);
  });
});

Deno.test("Http1Connection.readHead refuses malformed status lines and fields", async () => {
  for (
    const text of [
      "HTTP/2 200\r\n\r\n",
      "garbage\r\n\r\n",
      "HTTP/1.1 200 OK\r\n folded: x\r\n\r\n",
      "HTTP/1.1 200 OK\r\nno-colon\r\n\r\n",
      "HTTP/1.1 200 OK\r\nx: a\rb\r\n\r\n",
    ]
  ) {
    await withHead([text], async (connection) => {
      await assert.rejects(connection.readHead(), HttpProtocolError, JSON.stringify(text));
    });
  }
});

Deno.test("Http1Connection.write writes all of a large message; close is idempotent", async () => {
  const { client, server } = await socketPair();
  const connection = new Http1Connection(client);
  const bytes = new Uint8Array(4 * 1024 * 1024).fill(7);
  const reading = (async () => {
    const buf = new Uint8Array(64 * 1024);
    let total = 0;
    while (total < bytes.length) {
      const n = await server.read(buf);
      if (n === null) break;
      total += n;
    }
    return total;
  })();
  await within(connection.write(bytes), 5000, "the write");
  assert.equal(await within(reading, 5000, "the reads"), bytes.length);
  assert.equal(connection.closed, false);
  connection.close();
  connection.close();
  assert.equal(connection.closed, true);
  assert.equal(await server.read(new Uint8Array(1)), null, "the server sees the close");
  server.close();
});
