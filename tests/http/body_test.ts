import assert from "node:assert/strict";
import { ApiError } from "../../src/errors.ts";
import { readJsonObject } from "../../src/http/body.ts";
import { Expiries } from "../../src/http/expiries.ts";

const TIMERS = new Expiries(5);

/** Body limits of `max` bytes and a generous time. */
const within = (max: number) => ({ max_body_bytes: max, body_timeout_ms: 10_000 });

const encoder = new TextEncoder();

/** A POST whose body arrives in `pieces` (chunked, no Content-Length) or, with `length`,
 * declares that Content-Length. */
function post(pieces: string[], length?: number): Request {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (length !== undefined) headers["content-length"] = String(length);
  return new Request("http://localhost/v1/chat/completions", {
    method: "POST",
    headers,
    body: ReadableStream.from(pieces.map((p) => encoder.encode(p))),
  });
}

async function status(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (e) {
    assert.ok(e instanceof ApiError);
    return e.status;
  }
}

Deno.test("readJsonObject reads a body with a declared length or in chunks, and the same JSON", async () => {
  const text = '{"model":"m","messages":[{"role":"user","content":"héllo"}]}';
  const whole = await readJsonObject(
    post([text], encoder.encode(text).length),
    within(1000),
    TIMERS,
  );
  const chunked = await readJsonObject(
    post([text.slice(0, 7), text.slice(7, 30), text.slice(30)]),
    within(1000),
    TIMERS,
  );
  assert.deepEqual(whole, JSON.parse(text));
  assert.deepEqual(chunked, JSON.parse(text));
});

Deno.test("readJsonObject refuses more than the limit with 413, declared or counted", async () => {
  const big = JSON.stringify({ x: "y".repeat(200) });
  assert.equal(await status(readJsonObject(post([big], big.length), within(100), TIMERS)), 413);
  assert.equal(
    await status(readJsonObject(post([big.slice(0, 50), big.slice(50)]), within(100), TIMERS)),
    413,
  );
  // A declared length smaller than what comes is still held to the limit.
  assert.equal(await status(readJsonObject(post([big], 10), within(100), TIMERS)), 413);
  assert.equal(
    await status(readJsonObject(post([big], big.length), within(big.length), TIMERS)),
    200,
  );
});

Deno.test("readJsonObject names bad UTF-8 and bad JSON as invalid_json", async () => {
  const bad = new Request("http://localhost/", {
    method: "POST",
    headers: { "content-type": "application/json", "content-length": "3" },
    body: Uint8Array.of(0x22, 0xff, 0x22),
  });
  await assert.rejects(readJsonObject(bad, within(100), TIMERS), (e) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.code, "invalid_json");
    assert.match(e.message, /not valid UTF-8/);
    return true;
  });
  await assert.rejects(
    readJsonObject(post(["{1}"], 3), within(100), TIMERS),
    /parse the JSON body/,
  );
});

Deno.test("readJsonObject keeps a U+FFFD the client wrote, and still refuses an invalid byte beside one", async () => {
  const body = (bytes: number[]) =>
    new Request("http://localhost/", {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(bytes.length) },
      body: Uint8Array.from(bytes),
    });
  // {"a":"\uFFFD"} with the replacement character written as UTF-8 (EF BF BD).
  const replacement = [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xef, 0xbf, 0xbd, 0x22, 0x7d];
  assert.deepEqual(await readJsonObject(body(replacement), within(100), TIMERS), {
    a: "\uFFFD",
  });
  const both = [...replacement.slice(0, 9), 0xff, ...replacement.slice(9)];
  await assert.rejects(readJsonObject(body(both), within(100), TIMERS), /not valid UTF-8/);
});

/** A POST whose body sends `first` and then nothing more, or fails with `failure`; with
 * `declared`, it says that Content-Length. */
function stalled(first: string, failure?: Error, declared?: number): Request {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (declared !== undefined) headers["content-length"] = String(declared);
  return new Request("http://localhost/v1/chat/completions", {
    method: "POST",
    headers,
    body: new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode(first));
        if (failure) controller.error(failure);
      },
    }),
  });
}

for (const declared of [undefined, 100, 200_000]) {
  const how = declared === undefined ? "chunked" : `declaring ${declared} bytes`;
  Deno.test(`readJsonObject cuts a body that does not arrive in time with 408 (${how})`, async () => {
    await assert.rejects(
      readJsonObject(stalled('{"model":', undefined, declared), {
        max_body_bytes: 1_000_000,
        body_timeout_ms: 100,
      }, TIMERS),
      (e) => {
        assert.ok(e instanceof ApiError);
        assert.equal(e.status, 408);
        assert.equal(e.code, "request_timeout");
        return true;
      },
    );
  });

  Deno.test(`readJsonObject answers an upload the client abandoned with 499 (${how})`, async () => {
    const gone = stalled('{"model":', new TypeError("connection reset"), declared);
    await assert.rejects(readJsonObject(gone, within(1_000_000), TIMERS), (e) => {
      assert.ok(e instanceof ApiError);
      assert.equal(e.status, 499);
      assert.equal(e.code, "client_disconnected");
      return true;
    });
  });
}

Deno.test("readJsonObject refuses a compressed body with 415 naming the encoding", async () => {
  for (const encoding of ["gzip", "br, gzip"]) {
    const request = new Request("http://localhost/", {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": encoding },
      body: "{}",
    });
    await assert.rejects(readJsonObject(request, within(100), TIMERS), (e) => {
      assert.ok(e instanceof ApiError);
      assert.equal(e.status, 415);
      assert.equal(e.code, "unsupported_content_encoding");
      assert.match(e.message, new RegExp(`Content-Encoding "${encoding}" is not supported`));
      return true;
    });
  }
  const identity = new Request("http://localhost/", {
    method: "POST",
    headers: { "content-type": "application/json", "content-encoding": "identity" },
    body: "{}",
  });
  assert.deepEqual(await readJsonObject(identity, within(100), TIMERS), {});
});
