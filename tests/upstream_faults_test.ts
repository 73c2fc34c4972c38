/**
 * Upstream faults through a real gateway port, for both upstream styles: what the client gets
 * (status and error body before streaming began, an SSE error event and no `[DONE]` after),
 * that the provider key never reaches a response or a log line, and that a client leaving
 * closes the upstream connection, streaming or not.
 */
import assert from "node:assert/strict";
import { SseDecoderStream } from "../src/http/sse.ts";
import { logRecord, openaiClient, postChat } from "./support/client.ts";
import { type Gateway, startGateway } from "./support/gateway.ts";
import { clientError } from "./support/rejection.ts";
import type { FakeUpstream, Fault } from "./support/fake_upstream.ts";
import { waitFor } from "./support/wait.ts";

const TARGETS = [
  { model: "oa-chat", upstream: "gpt-up", fake: (g: Gateway) => g.openai, eventsBeforeContent: 1 },
  // message_start, content_block_start, ping come before the first text.
  {
    model: "an-chat",
    upstream: "claude-up",
    fake: (g: Gateway) => g.anthropic,
    eventsBeforeContent: 3,
  },
] as const;

const HELLO = [{ role: "user" as const, content: "Hello there, how are you today?" }];

/** The SSE events of a raw streamed response. */
async function events(response: Response): Promise<string[]> {
  const out: string[] = [];
  for await (const e of response.body!.pipeThrough(new SseDecoderStream())) out.push(e.data);
  return out;
}

function fail(fake: FakeUpstream, fault: Fault): void {
  fake.faults = [fault];
}

for (const target of TARGETS) {
  const t = (name: string, fn: () => Promise<void>) =>
    Deno.test(`${target.model} through the gateway: ${name}`, fn);

  t("upstream failures before any output become the mapped status and a JSON error", async () => {
    await using gateway = await startGateway({ provider: { max_retries: 0, timeout_ms: 300 } });
    const fake = target.fake(gateway);
    const client = openaiClient(gateway.server);
    const rows: [Fault, number, string, RegExp][] = [
      [
        { status: 429, errorType: "rate_limit_error", headers: { "retry-after": "3" } },
        429,
        "rate_limit_exceeded",
        /rate limiting/,
      ],
      [{ status: 503, errorType: "api_error" }, 502, "upstream_error", /HTTP 503/],
      [{ status: 529, errorType: "overloaded_error" }, 502, "upstream_error", /HTTP 529/],
      [
        {
          status: 400,
          errorType: "invalid_request_error",
          message: `${target.upstream} rejects this`,
        },
        400,
        "invalid_request_error",
        new RegExp(`^${target.model} rejects this$`),
      ],
      [{ garbage: "<html>oops</html>" }, 502, "upstream_error", /not JSON|malformed/],
      [{ delayMs: 5_000 }, 504, "upstream_timeout", /did not answer within 300 ms/],
    ];
    for (const stream of [false, true]) {
      for (const [fault, status, code, message] of rows) {
        fail(fake, fault);
        const error = await clientError(async () => {
          if (!stream) {
            await client.chat.completions.create({ model: target.model, messages: HELLO });
            return;
          }
          const s = await client.chat.completions.create({
            model: target.model,
            messages: HELLO,
            stream: true,
          });
          for await (const _ of s) { /* the error comes before the first chunk */ }
        });
        const what = `${JSON.stringify(fault)} stream=${stream}`;
        assert.equal(error.status, status, what);
        const body = error.error as { code?: string; message?: string; type?: string };
        if (code === "invalid_request_error") assert.equal(body.type, code, what);
        else assert.equal(body.code, code, what);
        assert.match(body.message ?? "", message, what);
        if (status === 429) assert.equal(error.headers?.get("retry-after"), "3");
      }
    }
  });

  t("a 401 from the upstream is a 502 that shows the key nowhere", async () => {
    await using gateway = await startGateway({ provider: { max_retries: 0 } });
    const fake = target.fake(gateway);
    fail(fake, {
      status: 401,
      errorType: "authentication_error",
      message: `Incorrect API key provided: ${fake.apiKey}`,
    });
    const response = await postChat(gateway.server, { model: target.model, messages: HELLO });
    assert.equal(response.status, 502);
    const text = await response.text();
    assert.equal(JSON.parse(text).error.code, "upstream_error");
    assert.ok(!text.includes(fake.apiKey));
    await logRecord(gateway.server, response.headers.get("x-request-id"));
    const { out, err } = gateway.server.output;
    assert.match(err, /refused the API key \(HTTP 401/);
    assert.ok(!out.includes(fake.apiKey) && !err.includes(fake.apiKey));
  });

  t("an upstream error mid-stream is an SSE error event, then the end (no [DONE])", async () => {
    await using gateway = await startGateway();
    const fake = target.fake(gateway);
    fail(fake, { errorAfterEvents: target.eventsBeforeContent + 2 });
    const response = await postChat(gateway.server, {
      model: target.model,
      messages: HELLO,
      stream: true,
    });
    assert.equal(response.status, 200);
    const data = await events(response);
    assert.ok(data.length >= 3);
    assert.notEqual(data.at(-1), "[DONE]");
    const last = JSON.parse(data.at(-1)!);
    assert.equal(last.error.type, "upstream_error");
    assert.match(last.error.message, /Overloaded/);
    for (const d of data.slice(0, -1)) assert.equal(JSON.parse(d).choices[0].finish_reason, null);
    const record = await logRecord(gateway.server, response.headers.get("x-request-id"));
    assert.equal(record.status, 502);

    // The openai client raises it as an APIError while iterating.
    fail(fake, { errorAfterEvents: target.eventsBeforeContent + 2 });
    const client = openaiClient(gateway.server);
    const stream = await client.chat.completions.create({
      model: target.model,
      messages: HELLO,
      stream: true,
    });
    let content = "";
    const error = await clientError(async () => {
      for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? "";
    });
    assert.match(error.message, /Overloaded/);
    assert.ok(content.length > 0);
  });

  t("an error event before any output is an HTTP error, not a 200 stream", async () => {
    await using gateway = await startGateway();
    fail(target.fake(gateway), { errorAfterEvents: target.eventsBeforeContent - 1 });
    const response = await postChat(gateway.server, {
      model: target.model,
      messages: HELLO,
      stream: true,
    });
    assert.equal(response.status, 502);
    assert.match(response.headers.get("content-type") ?? "", /application\/json/);
    assert.match((await response.json()).error.message, /Overloaded/);
  });

  t("a client that leaves a non-streamed call closes the upstream connection", async () => {
    await using gateway = await startGateway();
    const fake = target.fake(gateway);
    fail(fake, { delayMs: 10_000 });
    const abort = new AbortController();
    const pending = postChat(gateway.server, { model: target.model, messages: HELLO }, {
      signal: abort.signal,
    }).catch((e) => e);
    await waitFor(() => fake.received.length === 1, "the upstream call");
    abort.abort();
    assert.equal((await pending).name, "AbortError");
    assert.match(await fake.last.gone, /request signal|stream cancelled/);
    await waitFor(
      () => gateway.server.output.records().find((r) => r.status === 499),
      "the 499 log record",
    );
  });

  t("a client that leaves a stream closes the upstream stream", async () => {
    await using gateway = await startGateway();
    const fake = target.fake(gateway);
    fail(fake, { stallAfterEvents: target.eventsBeforeContent + 2 });
    const response = await postChat(gateway.server, {
      model: target.model,
      messages: HELLO,
      stream: true,
    });
    const reader = response.body!.getReader();
    assert.equal((await reader.read()).done, false);
    await reader.cancel();
    assert.match(await fake.last.gone, /request signal|stream cancelled/);
    const record = await logRecord(gateway.server, response.headers.get("x-request-id"));
    assert.equal(record.status, 499);
  });
}
