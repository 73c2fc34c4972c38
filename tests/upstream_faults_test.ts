/**
 * Upstream faults through a real gateway port, for every upstream style: what the client gets
 * (status and error body before streaming began, an SSE error event and no `[DONE]` after),
 * that the provider key never reaches a response or a log line, that a client leaving
 * closes the upstream connection, streaming or not, that a slow client is not the upstream's
 * timeout, that what an upstream sends is capped, and that what it says about a request
 * reaches stderr only with `logs.include_content`.
 */
import assert from "node:assert/strict";
import Anthropic, { APIError as AnthropicAPIError } from "npm:@anthropic-ai/sdk@1.12.0";
import { SseDecoderStream } from "../src/http/sse.ts";
import { logRecord, openaiClient, postChat } from "./support/client.ts";
import { type Gateway, startGateway } from "./support/gateway.ts";
import { clientError } from "./support/rejection.ts";
import type { FakeUpstream, Fault } from "./support/fake_upstream.ts";
import { STYLES, type UpstreamStyle } from "./support/provider_styles.ts";
import { startServer, testConfig } from "./support/server.ts";
import { waitFor } from "./support/wait.ts";

const TARGETS = [
  {
    model: "oa-chat",
    upstream: "gpt-up",
    fake: (g: Gateway) => g.openai,
    style: STYLES[0]!,
    eventsBeforeContent: 1,
  },
  // message_start, content_block_start, ping come before the first text.
  {
    model: "an-chat",
    upstream: "claude-up",
    fake: (g: Gateway) => g.anthropic,
    style: STYLES[1]!,
    eventsBeforeContent: 3,
  },
  // Every Gemini frame holds content.
  {
    model: "ge-chat",
    upstream: "gemini-up",
    fake: (g: Gateway) => g.gemini,
    style: STYLES[2]!,
    eventsBeforeContent: 0,
  },
] as const;

const MiB = 1024 * 1024;
/** What the caller asked, long enough to be cut when quoted: a marker at each end. */
const PROMPT = `zebra-sentinel ${"and so on ".repeat(30)}tail-sentinel`;

/** A gateway with one model behind a fake of `style`, and `logs.include_content` as given. */
async function contentGateway(
  style: UpstreamStyle,
  model: { id: string; upstream: string },
  includeContent: boolean,
) {
  const fake = style.start();
  const server = await startServer({
    config: testConfig((raw) => {
      (raw.providers as unknown[]).push({
        id: "up",
        style: style.name,
        base_url: style.baseUrl(fake.url),
        api_key_env: "UP_KEY",
        max_retries: 0,
      });
      (raw.models as unknown[]).push({
        id: model.id,
        provider: "up",
        upstream_model: model.upstream,
        chat_completions: true,
      });
      raw.logs = { include_content: includeContent };
    }),
    env: (name) => name === "UP_KEY" ? fake.apiKey : undefined,
  });
  return {
    server,
    fake,
    async [Symbol.asyncDispose]() {
      await server.close();
      await fake.close();
    },
  };
}

/** Samples the process's RSS until stopped; the most it grew above where it started. */
function rssGrowth(): () => number {
  const start = Deno.memoryUsage().rss;
  let peak = start;
  const timer = setInterval(() => peak = Math.max(peak, Deno.memoryUsage().rss), 5);
  return () => {
    clearInterval(timer);
    return Math.max(peak, Deno.memoryUsage().rss) - start;
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

/** The `@anthropic-ai/sdk` client's APIError that `run` throws. */
async function anthropicError(run: () => Promise<unknown>): Promise<AnthropicAPIError> {
  try {
    await run();
  } catch (e) {
    if (e instanceof AnthropicAPIError) return e;
    throw e;
  }
  throw new Error("expected the Anthropic client's APIError, got a result");
}

for (const target of TARGETS) {
  const t = (name: string, fn: () => Promise<void>) =>
    Deno.test(`${target.model} through the gateway: ${name}`, fn);

  t("upstream failures before any output become the mapped status and a JSON error", async () => {
    await using gateway = await startGateway({ provider: { max_retries: 0, timeout_ms: 300 } });
    const fake = target.fake(gateway);
    const client = openaiClient(gateway.server);
    // The fault, then the status, code, message and retry-after the client gets.
    const rows: [Fault, number, string, RegExp, string | null][] = [
      [
        { status: 429, errorType: "rate_limit_error", headers: { "retry-after": "3" } },
        429,
        "rate_limit_exceeded",
        /rate limiting/,
        "3",
      ],
      // Without a retry-after: the rate limit's reset, else 1 s; never none.
      [
        {
          status: 429,
          errorType: "rate_limit_error",
          headers: { "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "7.5s" },
        },
        429,
        "rate_limit_exceeded",
        /rate limiting/,
        "8",
      ],
      [{ status: 429, errorType: "rate_limit_error" }, 429, "rate_limit_exceeded", /rate/, "1"],
      [{ status: 503, errorType: "api_error" }, 502, "upstream_error", /HTTP 503/, null],
      [
        { status: 529, errorType: "overloaded_error" },
        503,
        "upstream_overloaded",
        /overloaded \(HTTP 529/,
        null,
      ],
      // The upstream's own gateway timeout, as the gateway's: the same for every style.
      [{ status: 504, errorType: "timeout_error" }, 504, "upstream_timeout", /HTTP 504/, null],
      [
        {
          status: 400,
          errorType: "invalid_request_error",
          message: `${target.upstream} rejects this`,
        },
        400,
        "invalid_request_error",
        new RegExp(`^${target.model} rejects this$`),
        null,
      ],
      [{ garbage: "<html>oops</html>" }, 502, "upstream_error", /not JSON|malformed/, null],
      [{ delayMs: 5_000 }, 504, "upstream_timeout", /did not answer within 300 ms/, null],
    ];
    for (const stream of [false, true]) {
      for (const [fault, status, code, message, retryAfter] of rows) {
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
        assert.equal(error.headers?.get("retry-after") ?? null, retryAfter, what);
      }
    }
  });

  t(
    "an overloaded upstream (529): Anthropic's own 529 on /v1/messages, a 503 elsewhere",
    async () => {
      await using gateway = await startGateway({ provider: { max_retries: 1 } });
      const fake = target.fake(gateway);
      const overloaded = { status: 529, errorType: "overloaded_error", message: "Overloaded" };
      const anthropic = new Anthropic({
        baseURL: gateway.server.url,
        apiKey: "anonymous",
        maxRetries: 0,
        // Anonymous: the client insists on a key, which is not sent.
        fetch: (url: string | URL | Request, init?: RequestInit) => {
          const headers = new Headers(init?.headers);
          headers.delete("authorization");
          headers.delete("x-api-key");
          return fetch(url, { ...init, headers });
        },
      });
      const openai = openaiClient(gateway.server);
      for (const stream of [false, true]) {
        const what = `stream=${stream}`;
        // Retried once (max_retries 1), then answered.
        fake.faults = [overloaded, overloaded];
        const before = fake.received.length;
        const raw = await fetch(`${gateway.server.url}/v1/messages`, {
          method: "POST",
          headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
          body: JSON.stringify({ model: target.model, max_tokens: 50, messages: HELLO, stream }),
        });
        assert.equal(raw.status, 529, what);
        const body = await raw.json();
        assert.equal(body.type, "error", what);
        assert.equal(body.error.type, "overloaded_error", what);
        assert.match(body.error.message, /is overloaded \(HTTP 529/, what);
        assert.equal(fake.received.length - before, 2, what);
        const record = await logRecord(gateway.server, raw.headers.get("x-request-id"));
        assert.equal(record.status, 529);

        // The official SDK sees Anthropic's overload.
        fake.faults = [overloaded, overloaded];
        const error = await anthropicError(async () => {
          const params = { model: target.model, max_tokens: 50, messages: HELLO };
          if (!stream) return void await anthropic.messages.create(params);
          for await (const _ of await anthropic.messages.create({ ...params, stream: true })) {
            // the error comes before the first event
          }
        });
        assert.equal(error.status, 529, what);
        assert.equal(
          (error.error as { error?: { type?: string } }).error?.type,
          "overloaded_error",
        );

        // OpenAI's protocols answer an overload with a 503.
        fake.faults = [overloaded, overloaded];
        const chat = await clientError(async () => {
          if (!stream) {
            return void await openai.chat.completions.create({
              model: target.model,
              messages: HELLO,
            });
          }
          const s = await openai.chat.completions.create({
            model: target.model,
            messages: HELLO,
            stream: true,
          });
          for await (const _ of s) { /* the error comes before the first chunk */ }
        });
        assert.equal(chat.status, 503, what);
        assert.equal((chat.error as { code?: string }).code, "upstream_overloaded", what);
        fake.faults = [overloaded, overloaded];
        const responses = await fetch(`${gateway.server.url}/v1/responses`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: target.model, input: "Hello there", stream }),
        });
        assert.equal(responses.status, 503, what);
        assert.equal((await responses.json()).error.code, "upstream_overloaded", what);
      }
    },
  );

  t(
    "a stream that ends without its finish: a 502 before any output, the error event after, as for every style",
    async () => {
      await using gateway = await startGateway();
      const fake = target.fake(gateway);
      const messages = (body: Record<string, unknown>) =>
        fetch(`${gateway.server.url}/v1/messages`, {
          method: "POST",
          headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
          body: JSON.stringify({ max_tokens: 50, ...body }),
        });
      const request = { model: target.model, messages: HELLO, stream: true };
      // OpenAI-style: no finish_reason and no [DONE]; Anthropic: no message_stop; Gemini: no
      // finishReason. Cut before any content: an HTTP error, as a failure before the stream.
      fail(fake, { endAfterEvents: target.eventsBeforeContent });
      const early = await postChat(gateway.server, request);
      assert.equal(early.status, 502);
      const error = (await early.json()).error;
      assert.deepEqual([error.type, error.code], ["upstream_error", "upstream_error"]);
      assert.match(error.message, /ended before/);
      // (The Messages stream begins with its first event: an empty body is the cut before it.)
      fail(fake, { endAfterEvents: 0 });
      const earlyMessage = await messages(request);
      assert.equal(earlyMessage.status, 502);
      assert.equal((await earlyMessage.json()).error.type, "api_error");

      // Cut after content: the 200 stream ends with the error event, logged as a 502.
      fail(fake, { endAfterEvents: target.eventsBeforeContent + 2 });
      const late = await postChat(gateway.server, request);
      assert.equal(late.status, 200);
      const data = await events(late);
      assert.notEqual(data.at(-1), "[DONE]");
      const last = JSON.parse(data.at(-1)!).error;
      assert.deepEqual([last.type, last.code], ["upstream_error", "upstream_error"]);
      assert.match(last.message, /ended before/);
      assert.equal((await logRecord(gateway.server, late.headers.get("x-request-id"))).status, 502);
      fail(fake, { endAfterEvents: target.eventsBeforeContent + 2 });
      const lateMessage = await messages(request);
      assert.equal(lateMessage.status, 200);
      const text = await lateMessage.text();
      assert.match(text, /event: error\ndata: \{"type":"error","error":\{"type":"api_error"/);
      assert.ok(!text.includes("event: message_stop"));
    },
  );

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
    fail(target.fake(gateway), { errorAfterEvents: Math.max(0, target.eventsBeforeContent - 1) });
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

  t("a client that reads slowly gets a paced stream longer than the timeout, whole", async () => {
    await using gateway = await startGateway({ provider: { timeout_ms: 150 } });
    const fake = target.fake(gateway);
    fake.script = () => ({ text: "one two three", toolCalls: [] });
    fake.faults = [{ paceMs: 40 }];
    // Straight to the handler: no socket buffers between the stream and this reader, which
    // takes 200 ms over each event (the upstream's events come 40 ms apart, ~300 ms in all).
    const response = await gateway.server.app.handler(
      new Request(`${gateway.server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: target.model, messages: HELLO, stream: true }),
      }),
      {
        remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 40_000 },
        completed: new Promise<void>(() => {}),
      },
    );
    assert.equal(response.status, 200);
    const data: string[] = [];
    for await (const e of response.body!.pipeThrough(new SseDecoderStream())) {
      data.push(e.data);
      await sleep(200);
    }
    assert.equal(data.at(-1), "[DONE]");
    const content = data.slice(0, -1).map((d) => JSON.parse(d).choices[0]?.delta.content ?? "");
    assert.equal(content.join(""), "one two three");
    const record = await logRecord(gateway.server, response.headers.get("x-request-id"));
    assert.equal(record.status, 200);
  });

  t(
    "a silent upstream mid-stream still ends the stream with an upstream_timeout event",
    async () => {
      // Long enough for the events before the stall to arrive on a loaded machine (150 ms was
      // not, once: a 504 before the stream began).
      await using gateway = await startGateway({ provider: { timeout_ms: 600 } });
      fail(target.fake(gateway), { stallAfterEvents: target.eventsBeforeContent + 2 });
      const response = await postChat(gateway.server, {
        model: target.model,
        messages: HELLO,
        stream: true,
      });
      assert.equal(response.status, 200);
      const last = JSON.parse((await events(response)).at(-1)!);
      assert.equal(last.error.code, "upstream_timeout");
    },
  );

  t(
    "a stream line that never ends: an SSE error event at max_event_bytes, memory bounded",
    async () => {
      await using gateway = await startGateway({ provider: { max_event_bytes: MiB } });
      const fake = target.fake(gateway);
      // A 256 MiB line (the fake's default) against a 1 MiB cap.
      fail(fake, { longLineAfterEvents: target.eventsBeforeContent + 2 });
      const growth = rssGrowth();
      const response = await postChat(gateway.server, {
        model: target.model,
        messages: HELLO,
        stream: true,
      });
      assert.equal(response.status, 200);
      const data = await events(response);
      const grew = growth();
      const last = JSON.parse(data.at(-1)!);
      assert.equal(last.error.code, "upstream_error");
      assert.match(last.error.message, /a stream event larger than the gateway accepts \(1048576/);
      assert.match(await fake.last.gone, /request signal|stream cancelled/);
      assert.ok(grew < 128 * MiB, `RSS grew by ${Math.round(grew / MiB)} MiB`);
      const record = await logRecord(gateway.server, response.headers.get("x-request-id"));
      assert.equal(record.status, 502);
    },
  );

  t("a JSON answer over max_response_bytes is a 502", async () => {
    await using gateway = await startGateway({ provider: { max_response_bytes: 64 * 1024 } });
    const fake = target.fake(gateway);
    fail(fake, { oversizedBytes: 16 * MiB });
    const response = await postChat(gateway.server, { model: target.model, messages: HELLO });
    assert.equal(response.status, 502);
    const error = (await response.json()).error;
    assert.equal(error.code, "upstream_error");
    assert.match(error.message, /sent an answer larger than the gateway accepts \(65536 bytes\)/);
    assert.match(await fake.last.gone, /request signal|stream cancelled/);
  });

  t(
    "an oversized error body quoting the prompt: the mapped status, the prompt in no log",
    async () => {
      await using gateway = await startGateway({ provider: { max_retries: 0 } });
      fail(target.fake(gateway), {
        status: 400,
        errorType: "invalid_request_error",
        quotePrompt: true,
        errorPadBytes: 4 * MiB,
      });
      const messages = [{ role: "user", content: PROMPT }];
      const response = await postChat(gateway.server, { model: target.model, messages });
      assert.equal(response.status, 400);
      assert.match((await response.json()).error.message, /rejected the request \(HTTP 400\)/);
      await logRecord(gateway.server, response.headers.get("x-request-id"));
      const { out, err } = gateway.server.output;
      assert.match(err, /upstream answered HTTP 400/);
      assert.ok(!err.includes("zebra-sentinel") && !out.includes("zebra-sentinel"));
    },
  );

  for (const includeContent of [false, true]) {
    t(
      `an upstream 400 quoting the prompt reaches stderr ${
        includeContent ? "with include_content" : "never without include_content"
      }`,
      async () => {
        await using gateway = await contentGateway(
          target.style,
          { id: target.model, upstream: target.upstream },
          includeContent,
        );
        gateway.fake.faults = [{
          status: 400,
          errorType: "invalid_request_error",
          quotePrompt: true,
        }];
        const messages = [{ role: "user", content: PROMPT }];
        const response = await postChat(gateway.server, { model: target.model, messages });
        assert.equal(response.status, 400);
        const { message } = (await response.json()).error;
        assert.match(message, /zebra-sentinel/, "the caller sees what the upstream said");
        assert.ok(!message.includes("tail-sentinel"), "cut to 100 characters of the quoted value");
        await logRecord(gateway.server, response.headers.get("x-request-id"));
        const { err } = gateway.server.output;
        // Gemini's type is its status name.
        const type = target.style.name === "gemini" ? "INVALID_ARGUMENT" : "invalid_request_error";
        assert.match(err, new RegExp(`upstream answered HTTP 400 ${type}`));
        assert.equal(err.includes("zebra-sentinel"), includeContent);
      },
    );
  }
}
