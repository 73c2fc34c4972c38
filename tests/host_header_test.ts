/**
 * A `Host` header that is not a host gets a JSON 400 and a log record, never Deno's plain 500,
 * and never moves the path: Deno writes `request.url` as the scheme, the `Host` and the
 * request-target one after the other, so `Host: x/admin/keys?` on `GET /v1/models` would
 * otherwise be routed to `/admin/keys`.
 */
import assert from "node:assert/strict";
import { startServer } from "./support/server.ts";
import { eventually } from "./support/eventually.ts";

/** Sends `head` (one request, `Connection: close`) and reads the answer to the close. */
async function exchange(port: number, head: string): Promise<{ status: number; body: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const bytes = new TextEncoder().encode(head);
    for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
    const text = await new Response(conn.readable).text();
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1]);
    return { status, body: text.slice(text.indexOf("\r\n\r\n") + 4) };
  } finally {
    try {
      conn.close();
    } catch {
      // Closed by reading to the end.
    }
  }
}

const request = (target: string, host: string | null, version = "1.1") =>
  `GET ${target} HTTP/${version}\r\n${host === null ? "" : `host: ${host}\r\n`}` +
  "connection: close\r\n\r\n";

Deno.test("a Host header that is not a host gets a JSON 400, logged with the path asked for", async () => {
  await using server = await startServer();
  const port = Number(new URL(server.url).port);
  for (
    const host of [
      "a b",
      "x:99999",
      "[::1",
      "a%20b",
      "x/healthz?",
      "x/healthz#",
      "x\\healthz",
      "u@x",
    ]
  ) {
    const { status, body } = await exchange(port, request("/v1/models", host));
    assert.equal(status, 400, host);
    const error = JSON.parse(body).error;
    assert.equal(error.type, "invalid_request_error", host);
    assert.equal(error.code, "invalid_host", host);
    assert.match(error.message, /^The Host header ".*" is not a host name\.$/, host);
  }
  const records = await eventually(() => {
    const records = server.output.records().filter((r) => r.status === 400);
    return records.length === 8 ? records : undefined;
  }, "the 400s' log records");
  for (const record of records) {
    assert.equal(record.path, "/v1/models");
    assert.equal(record.error, "invalid_host");
  }
});

Deno.test("the hosts a client may send still reach their route", async () => {
  await using server = await startServer();
  const port = Number(new URL(server.url).port);
  const hosts = [`127.0.0.1:${port}`, "A.Example.COM:80", "[::1]:8000", "", "my_host.local"];
  for (const host of hosts) {
    const { status, body } = await exchange(port, request("/v1/models", host));
    assert.equal(status, 200, host);
    assert.equal(JSON.parse(body).object, "list", host);
  }
  // HTTP/1.0 without a Host, and an absolute-form target (its authority is the URL's host).
  assert.equal((await exchange(port, request("/v1/models", null, "1.0"))).status, 200);
  const absolute = await exchange(port, request("http://example.com/healthz", "example.com"));
  assert.equal(absolute.status, 200);
  assert.equal(JSON.parse(absolute.body).status, "ok");
});
