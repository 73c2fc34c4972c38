/**
 * The fault table of DESIGN §6, row by row, for both upstream styles: what the adapter throws
 * for each upstream failure, how often it retried, that nothing is retried once streaming
 * began, that the provider's key never reaches a message or a log line, that a caller who
 * leaves closes the upstream connection (the fake sees it go) with or without streaming, that a
 * slow reader is not an upstream timeout, that answers over the size caps are cut, and that
 * what an upstream says about a request reaches stderr only with `logs.include_content`.
 */
import assert from "node:assert/strict";
import type { CanonicalEvent } from "../../src/canonical/events.ts";
import type { FakeUpstream } from "../support/fake_upstream.ts";
import {
  assembleEvents,
  callContext,
  chatRequest,
  collect,
  providerDeps,
} from "../support/provider_call.ts";
import { styleProvider, STYLES, type UpstreamStyle } from "../support/provider_styles.ts";
import { gatewayError } from "../support/rejection.ts";
import { waitFor } from "../support/wait.ts";

/** Reads a stream until it throws; returns the events before and the error. */
async function streamFailure(stream: AsyncIterable<CanonicalEvent[]>) {
  const events: CanonicalEvent[] = [];
  const error = await gatewayError(async () => {
    for await (const batch of stream) events.push(...batch);
  });
  return { events, error };
}

/** Whether events end a stream cleanly: a `finish`, or the closing usage report (one after
 * content began; Anthropic reports the input's usage at the start too). */
function ended(events: readonly CanonicalEvent[]): boolean {
  const content = events.findIndex((e) => e.type === "block_start");
  return events.some((e, i) =>
    e.type === "finish" || (e.type === "usage" && content !== -1 && i > content)
  );
}

function quick(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const stream = chatRequest({ stream: true });

const MiB = 1024 * 1024;
/** What the caller asked, long enough to be cut when quoted: a marker at each end. */
const PROMPT = `zebra-sentinel ${"and so on ".repeat(30)}tail-sentinel`;

/** An adapter for `fake` with small size caps, and with or without `logs.include_content`. */
function capped(style: UpstreamStyle, fake: FakeUpstream, includeContent = false) {
  const deps = providerDeps(style.name, style.baseUrl(fake.url), fake.apiKey, {
    max_retries: 0,
    max_response_bytes: 64 * 1024,
    max_event_bytes: 16 * 1024,
  });
  deps.includeContent = includeContent;
  const provider = styleProvider(style.name, deps);
  return { provider, output: deps.output };
}

for (const style of STYLES) {
  const t = (name: string, fn: () => Promise<void>) =>
    Deno.test(`${style.name} faults: ${name}`, fn);

  t("upstream 429 → 429 after the bounded retries, retry-after passed on", async () => {
    await using fake = style.start();
    const fault = { status: 429, errorType: "rate_limit_error", headers: { "retry-after": "0" } };
    fake.faults = [fault, fault, fault, fault];
    const { provider, fetches } = style.make(fake.url, fake.apiKey);
    const error = await gatewayError(() => provider.chat(chatRequest(), callContext()));
    assert.equal(error.status, 429);
    assert.equal(error.type, "rate_limit_error");
    assert.equal(error.code, "rate_limit_exceeded");
    assert.equal(new Headers(error.headers).get("retry-after"), "1");
    assert.equal(fetches(), 3);
    assert.equal(fake.received.length, 3);
  });

  t("a 429 then success is retried (retry-after-ms honoured)", async () => {
    await using fake = style.start();
    fake.faults = [{ status: 429, headers: { "retry-after-ms": "5" } }];
    const { provider } = style.make(fake.url, fake.apiKey);
    const completion = await provider.chat(chatRequest(), callContext());
    assert.equal(completion.finish, "stop");
    assert.equal(fake.received.length, 2);
  });

  t("a retry-after beyond the deadline is not waited for", async () => {
    await using fake = style.start();
    fake.faults = [{ status: 429, headers: { "retry-after": "30" } }];
    const { provider } = style.make(fake.url, fake.apiKey, { timeout_ms: 2_000 });
    const error = await gatewayError(() => provider.chat(chatRequest(), callContext()));
    assert.equal(error.status, 429);
    assert.equal(new Headers(error.headers).get("retry-after"), "30");
    assert.equal(fake.received.length, 1);
  });

  t(
    "an upstream 429 without retry-after → 429 whose retry-after is the rate limit's reset",
    async () => {
      await using fake = style.start();
      const fault = {
        status: 429,
        errorType: "rate_limit_error",
        headers: { "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "19.2s" },
      };
      fake.faults = [fault, fault];
      const { provider } = style.make(fake.url, fake.apiKey, { max_retries: 1 });
      const reset = await gatewayError(() => provider.chat(chatRequest(), callContext()));
      assert.equal(reset.status, 429);
      assert.equal(new Headers(reset.headers).get("retry-after"), "20");
      // Nothing to go by: a default of 1 s, never no retry-after.
      const bareFault = { status: 429, errorType: "rate_limit_error" };
      fake.faults = [bareFault, bareFault];
      const bare = await gatewayError(() => provider.chat(chatRequest(), callContext()));
      assert.equal(new Headers(bare.headers).get("retry-after"), "1");
      assert.equal(fake.received.length, 4);
    },
  );

  for (const status of [408, 409, 500, 503]) {
    t(`upstream ${status} → 502 upstream_error after the bounded retries`, async () => {
      await using fake = style.start();
      const fault = { status, errorType: "api_error" };
      fake.faults = [fault, fault, fault];
      const { provider } = style.make(fake.url, fake.apiKey);
      const error = await gatewayError(() => provider.chat(chatRequest(), callContext()));
      assert.equal(error.status, 502);
      assert.equal(error.type, "upstream_error");
      assert.equal(error.code, "upstream_error");
      assert.match(error.message, new RegExp(`HTTP ${status}`));
      assert.equal(fake.received.length, 3);
    });
  }

  t("upstream 529 (overloaded) → 503 upstream_overloaded after the bounded retries", async () => {
    await using fake = style.start();
    const fault = { status: 529, errorType: "overloaded_error" };
    fake.faults = [fault, fault, { ...fault, headers: { "retry-after": "0" } }];
    const { provider } = style.make(fake.url, fake.apiKey);
    const error = await gatewayError(() => provider.chat(chatRequest(), callContext()));
    assert.deepEqual([error.status, error.type, error.code], [
      503,
      "upstream_error",
      "upstream_overloaded",
    ]);
    assert.match(error.message, /overloaded \(HTTP 529/);
    assert.equal(new Headers(error.headers).get("retry-after"), "1");
    assert.equal(error.inStyle("anthropic").status, 529);
    assert.equal(fake.received.length, 3);
  });

  t("upstream 504 → 504 upstream_timeout after the bounded retries", async () => {
    await using fake = style.start();
    const fault = { status: 504, errorType: "timeout_error" };
    fake.faults = [fault, fault, fault];
    const { provider } = style.make(fake.url, fake.apiKey);
    const error = await gatewayError(() => provider.chat(chatRequest(), callContext()));
    assert.deepEqual([error.status, error.type, error.code], [
      504,
      "upstream_error",
      "upstream_timeout",
    ]);
    assert.match(error.message, /HTTP 504/);
    assert.equal(fake.received.length, 3);
  });

  t("a 408 and a 409 are retried as the official SDKs retry them, then the answer", async () => {
    await using fake = style.start();
    fake.faults = [{ status: 408, errorType: "timeout_error" }, { status: 409 }];
    const { provider, output } = style.make(fake.url, fake.apiKey);
    const completion = await provider.chat(chatRequest(), callContext());
    assert.equal(completion.finish, "stop");
    assert.equal(fake.received.length, 3);
    assert.match(output.err, /HTTP 408[^]*retrying[^]*HTTP 409[^]*retrying/);
  });

  t("x-should-retry decides, as for the official SDKs", async () => {
    await using fake = style.start();
    const { provider } = style.make(fake.url, fake.apiKey);
    // `true` retries what the status alone would not (a 400 here).
    fake.faults = [{ status: 400, headers: { "x-should-retry": "true" } }];
    assert.equal((await provider.chat(chatRequest(), callContext())).finish, "stop");
    assert.equal(fake.received.length, 2);
    // `false` keeps a 503 from being retried.
    fake.faults = [{ status: 503, headers: { "x-should-retry": "false" } }];
    const error = await gatewayError(() => provider.chat(chatRequest(), callContext()));
    assert.equal(error.status, 502);
    assert.equal(fake.received.length, 3);
  });

  t("a 529 before a stream's first byte is retried, then the stream flows", async () => {
    await using fake = style.start();
    fake.faults = [{ status: 529, errorType: "overloaded_error" }];
    const { provider } = style.make(fake.url, fake.apiKey);
    const events = await collect(provider.chatStream(stream, callContext()));
    assert.equal(assembleEvents(events).finish, "stop");
    assert.equal(fake.received.length, 2);
  });

  t("max_retries 0 means one attempt", async () => {
    await using fake = style.start();
    fake.faults = [{ status: 503 }];
    const { provider } = style.make(fake.url, fake.apiKey, { max_retries: 0 });
    const error = await gatewayError(() => provider.chat(chatRequest(), callContext()));
    assert.equal(error.status, 502);
    assert.equal(fake.received.length, 1);
  });

  t("insufficient_quota is a 429 that is never retried", async () => {
    await using fake = style.start();
    fake.faults = [{
      status: 429,
      errorType: "insufficient_quota",
      errorCode: "insufficient_quota",
      message: "You exceeded your current quota",
    }];
    const { provider } = style.make(fake.url, fake.apiKey);
    const error = await gatewayError(() => provider.chat(chatRequest(), callContext()));
    assert.equal(error.status, 429);
    assert.equal(error.code, "insufficient_quota");
    assert.equal(fake.received.length, 1);
  });

  t("upstream 400 → 400 with the upstream's message, not retried", async () => {
    await using fake = style.start();
    fake.faults = [{
      status: 400,
      errorType: "invalid_request_error",
      message: "prompt is too long for upstream-model-v1: 300000 tokens > 200000 maximum",
    }];
    const { provider } = style.make(fake.url, fake.apiKey);
    const error = await gatewayError(() => provider.chat(chatRequest(), callContext()));
    assert.equal(error.status, 400);
    assert.equal(error.type, "invalid_request_error");
    // Gemini's type is its status name.
    const type = style.name === "gemini" ? "INVALID_ARGUMENT" : "invalid_request_error";
    assert.equal(error.code, type, "the upstream's type when it has no code");
    assert.equal(error.message, "prompt is too long for gw-model: 300000 tokens > 200000 maximum");
    assert.equal(fake.received.length, 1);
  });

  for (const status of [401, 403]) {
    t(`upstream ${status} → 502 whose message and logs never hold the key`, async () => {
      await using fake = style.start({ apiKey: "sk-the-right-key-000000000000" });
      const wrongKey = "sk-wrong-key-SECRET-4242424242424242";
      fake.faults = [{
        status,
        errorType: status === 401 ? "authentication_error" : "permission_error",
        message: `Incorrect API key provided: ${wrongKey}.`,
      }];
      const { provider, output } = style.make(fake.url, wrongKey);
      for (const call of [() => provider.chat(chatRequest(), callContext())]) {
        const error = await gatewayError(call);
        assert.equal(error.status, 502);
        assert.equal(error.code, "upstream_error");
        assert.match(error.message, /credentials/);
        assert.ok(!JSON.stringify(error.toBody()).includes(wrongKey));
        assert.ok(!JSON.stringify(error.toBody()).includes("SECRET"));
      }
      // A wrong key without a fault: the fake's own check answers 401.
      const error = await gatewayError(() => provider.chat(chatRequest(), callContext()));
      assert.equal(error.status, 502);
      assert.match(output.err, new RegExp(`HTTP ${status}`));
      assert.match(output.err, /UP_API_KEY/);
      assert.ok(!output.err.includes("SECRET") && !output.out.includes("SECRET"));
      assert.equal(fake.received.length, 2);
    });
  }

  t("upstream 404 (unknown model) → 502 naming a configuration problem", async () => {
    await using fake = style.start();
    fake.faults = [{ status: 404, errorType: "not_found_error", message: "model: nope" }];
    const { provider } = style.make(fake.url, fake.apiKey);
    const error = await gatewayError(() => provider.chat(chatRequest(), callContext()));
    assert.equal(error.status, 502);
    assert.match(error.message, /configuration/);
    assert.equal(fake.received.length, 1);
  });

  t("garbage instead of JSON → 502", async () => {
    await using fake = style.start();
    fake.faults = [{ garbage: "<html>Bad gateway</html>" }, { garbage: '{"unexpected": true}' }];
    const { provider } = style.make(fake.url, fake.apiKey);
    for (let i = 0; i < 2; i++) {
      const error = await gatewayError(() => provider.chat(chatRequest(), callContext()));
      assert.equal(error.status, 502);
      assert.equal(error.code, "upstream_error");
      assert.match(error.message, /not JSON|malformed/);
    }
  });

  t("a stream of garbage → 502, never a clean stop", async () => {
    await using fake = style.start();
    fake.faults = [{ garbage: "data: {not json\n\n" }, { garbage: "hello" }];
    const { provider } = style.make(fake.url, fake.apiKey);
    for (let i = 0; i < 2; i++) {
      const { events, error } = await streamFailure(provider.chatStream(stream, callContext()));
      assert.equal(error.status, 502);
      assert.ok(!ended(events));
    }
  });

  t("connection refused → 502 after the bounded retries", async () => {
    const listener = Deno.listen({ port: 0, hostname: "127.0.0.1" });
    const port = (listener.addr as Deno.NetAddr).port;
    listener.close();
    const { provider, fetches, output } = style.make(`http://127.0.0.1:${port}`, "sk-x");
    const error = await gatewayError(() => provider.chat(chatRequest(), callContext()));
    assert.equal(error.status, 502);
    assert.equal(error.code, "upstream_error");
    assert.match(error.message, /Could not reach/);
    assert.equal(fetches(), 3);
    assert.match(output.err, /could not connect/);
  });

  t(
    "a deadline before the answer → 504 upstream_timeout, and the upstream call is closed",
    async () => {
      await using fake = style.start();
      fake.faults = [{ delayMs: 10_000 }];
      const { provider } = style.make(fake.url, fake.apiKey, { timeout_ms: 100 });
      const error = await gatewayError(() => provider.chat(chatRequest(), callContext()));
      assert.equal(error.status, 504);
      assert.equal(error.type, "upstream_error");
      assert.equal(error.code, "upstream_timeout");
      assert.equal(fake.received.length, 1);
      assert.match(await fake.last.gone, /request signal|stream cancelled/);
    },
  );

  t("a stream that stalls → 504 mid-stream, and the upstream call is closed", async () => {
    await using fake = style.start();
    fake.faults = [{ stallAfterEvents: 5 }];
    const { provider } = style.make(fake.url, fake.apiKey, { timeout_ms: 150 });
    const { events, error } = await streamFailure(provider.chatStream(stream, callContext()));
    assert.ok(events.length >= 1);
    assert.equal(error.status, 504);
    assert.equal(error.code, "upstream_timeout");
    assert.ok(!ended(events));
    await fake.last.gone;
    assert.equal(fake.received.length, 1);
  });

  t("an error event mid-stream → the iterator throws; no finish, no retry", async () => {
    await using fake = style.start();
    fake.script = () => ({ text: "one two three four five six", toolCalls: [] });
    fake.faults = [{ errorAfterEvents: 4 }];
    const { provider } = style.make(fake.url, fake.apiKey);
    const { events, error } = await streamFailure(provider.chatStream(stream, callContext()));
    assert.equal(events[0]?.type, "start");
    assert.ok(events.some((e) => e.type === "block_delta"));
    assert.ok(!ended(events));
    assert.equal(error.status, 502);
    assert.equal(error.type, "upstream_error");
    assert.match(error.message, /Overloaded/);
    assert.equal(fake.received.length, 1);
  });

  t("a connection broken mid-stream → 502 from the iterator; no retry", async () => {
    await using fake = style.start();
    fake.script = () => ({ text: "one two three four five six", toolCalls: [] });
    fake.faults = [{ breakAfterEvents: 4 }];
    const { provider } = style.make(fake.url, fake.apiKey);
    const { events, error } = await streamFailure(provider.chatStream(stream, callContext()));
    assert.ok(events.some((e) => e.type === "block_delta"));
    assert.ok(!ended(events));
    assert.equal(error.status, 502);
    assert.equal(fake.received.length, 1);
  });

  t("a stream that ends early without an error → 502, never a clean stop", async () => {
    await using fake = style.start();
    fake.script = () => ({ text: "one two three four five six", toolCalls: [] });
    fake.faults = [{ endAfterEvents: 4 }, { garbage: "" }];
    const { provider } = style.make(fake.url, fake.apiKey);
    for (let i = 0; i < 2; i++) {
      const { events, error } = await streamFailure(provider.chatStream(stream, callContext()));
      assert.equal(error.status, 502);
      assert.match(error.message, /ended before/);
      assert.ok(!ended(events));
    }
  });

  t("a caller that leaves aborts a non-streamed upstream call", async () => {
    await using fake = style.start();
    fake.faults = [{ delayMs: 10_000 }];
    const { provider } = style.make(fake.url, fake.apiKey);
    const ctx = callContext();
    const call = gatewayError(() => provider.chat(chatRequest(), ctx));
    await waitFor(() => fake.received.length === 1, "the upstream call");
    ctx.abort.abort();
    const error = await call;
    assert.equal(error.status, 499);
    assert.match(await fake.last.gone, /request signal/);
  });

  t("a caller that stops reading (return()) closes the upstream stream", async () => {
    await using fake = style.start();
    fake.faults = [{ stallAfterEvents: 5 }];
    const { provider } = style.make(fake.url, fake.apiKey);
    const iterator = provider.chatStream(stream, callContext())[Symbol.asyncIterator]();
    const first = await iterator.next();
    assert.equal(first.done, false);
    await iterator.return?.();
    assert.match(await fake.last.gone, /request signal|stream cancelled/);
  });

  t("a caller that leaves while the stream stalls aborts the upstream stream", async () => {
    await using fake = style.start();
    fake.faults = [{ stallAfterEvents: 5 }];
    const { provider } = style.make(fake.url, fake.apiKey);
    const ctx = callContext();
    const iterator = provider.chatStream(stream, ctx)[Symbol.asyncIterator]();
    await iterator.next();
    const pending = gatewayError(async () => {
      while (!(await iterator.next()).done) { /* drain until the stall */ }
    });
    await quick(20);
    ctx.abort.abort();
    const error = await pending;
    assert.equal(error.status, 499);
    assert.match(await fake.last.gone, /request signal|stream cancelled/);
  });

  t("a caller already gone never reaches the upstream", async () => {
    await using fake = style.start();
    const { provider } = style.make(fake.url, fake.apiKey);
    const ctx = callContext();
    ctx.abort.abort();
    const error = await gatewayError(() => provider.chat(chatRequest(), ctx));
    assert.equal(error.status, 499);
    assert.equal(fake.received.length, 0);
  });

  t("a client that reads slowly gets a paced stream longer than the timeout, whole", async () => {
    await using fake = style.start();
    fake.script = () => ({ text: "one two three", toolCalls: [] });
    // Events 40 ms apart (about 300 ms in all) against a 150 ms timeout; the reader takes
    // 200 ms over each batch, so the upstream often waits for it.
    fake.faults = [{ paceMs: 40 }];
    const { provider } = style.make(fake.url, fake.apiKey, { timeout_ms: 150 });
    const events: CanonicalEvent[] = [];
    for await (const batch of provider.chatStream(stream, callContext())) {
      events.push(...batch);
      await quick(200);
    }
    const answer = assembleEvents(events);
    assert.deepEqual(answer.parts, [{ type: "text", text: "one two three" }]);
    assert.equal(answer.finish, "stop");
  });

  t(
    "a JSON answer over max_response_bytes → 502, and the upstream connection is closed",
    async () => {
      await using fake = style.start();
      fake.faults = [{ oversizedBytes: 4 * MiB }];
      const { provider, output } = capped(style, fake);
      const error = await gatewayError(() => provider.chat(chatRequest(), callContext()));
      assert.equal(error.status, 502);
      assert.equal(error.code, "upstream_error");
      assert.match(error.message, /sent an answer larger than the gateway accepts \(65536 bytes\)/);
      assert.match(await fake.last.gone, /request signal|stream cancelled/);
      assert.match(
        output.err,
        /an answer over max_response_bytes \(65536 bytes\); the call was cut/,
      );
    },
  );

  t(
    "a stream line that never ends → 502 mid-stream at max_event_bytes, connection closed",
    async () => {
      await using fake = style.start();
      fake.script = () => ({ text: "one two three four five six", toolCalls: [] });
      fake.faults = [{ longLineAfterEvents: 5, longLineBytes: 16 * MiB }];
      const { provider } = capped(style, fake);
      const { events, error } = await streamFailure(provider.chatStream(stream, callContext()));
      assert.ok(events.length >= 1);
      assert.ok(!ended(events));
      assert.equal(error.status, 502);
      assert.match(error.message, /a stream event larger than the gateway accepts \(16384 bytes\)/);
      assert.match(await fake.last.gone, /request signal|stream cancelled/);
    },
  );

  t("a stream over max_response_bytes → 502 mid-stream", async () => {
    await using fake = style.start();
    fake.script = () => ({ text: "word ".repeat(2000), toolCalls: [] });
    const { provider } = capped(style, fake);
    const long = chatRequest({ stream: true }, { maxTokens: 4000, maxTokensGiven: true });
    const { events, error } = await streamFailure(provider.chatStream(long, callContext()));
    assert.ok(events.length >= 1);
    assert.equal(error.status, 502);
    assert.match(error.message, /sent an answer larger than the gateway accepts \(65536 bytes\)/);
  });

  t(
    "an oversized error body quoting the prompt → the mapped status, the prompt nowhere",
    async () => {
      await using fake = style.start();
      fake.faults = [{
        status: 400,
        errorType: "invalid_request_error",
        quotePrompt: true,
        errorPadBytes: 2 * MiB,
      }];
      const { provider, output } = capped(style, fake, true);
      const request = chatRequest({
        messages: [{ role: "user", parts: [{ type: "text", text: PROMPT }] }],
      });
      const error = await gatewayError(() => provider.chat(request, callContext()));
      assert.equal(error.status, 400);
      assert.match(error.message, /rejected the request \(HTTP 400\)/);
      assert.ok(!output.err.includes("zebra-sentinel"));
      assert.match(output.err, /upstream answered HTTP 400/);
    },
  );

  for (const includeContent of [false, true]) {
    t(
      `an upstream 400 quoting the prompt: the caller sees it cut; stderr ${
        includeContent ? "too (include_content)" : "does not"
      }`,
      async () => {
        await using fake = style.start();
        fake.faults = [{ status: 400, errorType: "invalid_request_error", quotePrompt: true }];
        const { provider, output } = capped(style, fake, includeContent);
        const request = chatRequest({
          messages: [{ role: "user", parts: [{ type: "text", text: PROMPT }] }],
        });
        const error = await gatewayError(() => provider.chat(request, callContext()));
        assert.equal(error.status, 400);
        assert.match(error.message, /input_value='\[\{"role":"user".*zebra-sentinel.*…'\)$/);
        assert.ok(!error.message.includes("tail-sentinel"), "the quoted value is cut to 100");
        const type = style.name === "gemini" ? "INVALID_ARGUMENT" : "invalid_request_error";
        assert.match(output.err, new RegExp(`upstream answered HTTP 400 ${type}`));
        assert.equal(output.err.includes("zebra-sentinel"), includeContent);
        assert.ok(!output.err.includes("tail-sentinel"));
      },
    );
  }
}
