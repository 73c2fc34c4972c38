import assert from "node:assert/strict";
import { AnthropicProvider } from "../../src/providers/anthropic/provider.ts";
import { OpenAIProvider } from "../../src/providers/openai/provider.ts";
import type { Provider } from "../../src/providers/types.ts";
import type { CanonicalEvent } from "../../src/canonical/events.ts";
import { callContext, chatRequest, collect, providerDeps } from "../support/provider_call.ts";
import { waitFor } from "../support/wait.ts";
import { FetchHttpClient } from "../../src/http/client/fetch.ts";

const encoder = new TextEncoder();

const sse = (data: unknown, event?: string) =>
  `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;

const base = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "up" };
const choice = (delta: unknown, finish: string | null = null) => ({
  ...base,
  choices: [{ index: 0, delta, finish_reason: finish }],
});
/** Two network reads of an OpenAI stream: "Hel" in the first, "lo" and the end in the second. */
const OPENAI_READS = [
  sse(choice({ role: "assistant", content: "" })) + sse(choice({ content: "Hel" })),
  sse(choice({ content: "lo" })) + sse(choice({}, "stop")) +
  sse({ ...base, choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } }) +
  "data: [DONE]\n\n",
];

const at = (type: string, data: Record<string, unknown>) => sse({ type, ...data }, type);
/** The same answer as two reads of an Anthropic stream. */
const ANTHROPIC_READS = [
  at("message_start", {
    message: { id: "msg_1", type: "message", role: "assistant", usage: { input_tokens: 3 } },
  }) +
  at("content_block_start", { index: 0, content_block: { type: "text", text: "" } }) +
  at("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Hel" } }),
  at("content_block_delta", { index: 0, delta: { type: "text_delta", text: "lo" } }) +
  at("content_block_stop", { index: 0 }) +
  at("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } }) +
  at("message_stop", {}),
];

/** An adapter whose upstream answers with `reads`, each one network read. */
function adapter(style: "openai" | "anthropic", reads: string[]): Provider {
  const deps = providerDeps(style, "http://upstream.test/v1", "sk-up");
  deps.http = new FetchHttpClient(() => {
    const body = ReadableStream.from(reads.map((r) => encoder.encode(r)));
    return Promise.resolve(
      new Response(body, { headers: { "content-type": "text/event-stream" } }),
    );
  });
  return style === "openai" ? new OpenAIProvider(deps) : new AnthropicProvider(deps);
}

/** What an event says, for comparing groups. */
function summary(event: CanonicalEvent): string {
  switch (event.type) {
    case "block_start":
      return `open ${event.block.type}`;
    case "block_delta":
      return event.delta.type === "text" ? `text ${event.delta.text}` : event.delta.type;
    case "block_stop":
      return "close";
    case "usage":
      return `usage ${event.usage.input + event.usage.output}`;
    case "finish":
      return `finish ${event.reason}`;
    case "start":
      return "start";
  }
}

for (
  const [style, reads] of [["openai", OPENAI_READS], ["anthropic", ANTHROPIC_READS]] as const
) {
  Deno.test(`${style}: chatStream groups the events of each upstream read`, async () => {
    const groups: string[][] = [];
    const stream = adapter(style, reads).chatStream(chatRequest({ stream: true }), callContext());
    for await (const group of stream) groups.push(group.map(summary));
    assert.equal(groups.length, 2, JSON.stringify(groups));
    const [first, second] = groups as [string[], string[]];
    assert.deepEqual(first.filter((s) => !s.startsWith("usage")), [
      "start",
      "open text",
      "text Hel",
    ]);
    assert.deepEqual(second.filter((s) => !s.startsWith("usage")), [
      "text lo",
      "close",
      "finish stop",
    ]);
    assert.equal(groups.flat().findLast((s) => s.startsWith("usage")), "usage 5");
  });

  Deno.test(`${style}: a read with the whole answer is two groups, the first ending at the first text`, async () => {
    const groups: string[][] = [];
    const stream = adapter(style, [reads.join("")]).chatStream(
      chatRequest({ stream: true }),
      callContext(),
    );
    for await (const group of stream) groups.push(group.map(summary));
    assert.equal(groups.length, 2, JSON.stringify(groups));
    const [first, second] = groups as [string[], string[]];
    assert.equal(first.at(-1), "text Hel", JSON.stringify(first));
    assert.deepEqual(second.filter((s) => !s.startsWith("usage")), [
      "text lo",
      "close",
      "finish stop",
    ]);
  });

  Deno.test(`${style}: the events do not depend on how the bytes were split into reads`, async () => {
    const request = chatRequest({ stream: true });
    const whole = await collect(adapter(style, reads).chatStream(request, callContext()));
    const bytes = [...reads.join("")];
    const split = await collect(adapter(style, bytes).chatStream(request, callContext()));
    assert.deepEqual(split, whole);
  });
}

/** An OpenAI adapter whose upstream body sends `reads` and then, after the end marker, either
 * ends a little later or never ends; it records whether the body was read to its end or the
 * call was aborted. */
function lingering(endsAfterDone: boolean) {
  const deps = providerDeps("openai", "http://upstream.test/v1", "sk-up", { timeout_ms: 200 });
  const seen = { readToEnd: false, aborted: false, cancelled: false };
  deps.http = new FetchHttpClient((_input, init) => {
    const pieces = [...OPENAI_READS];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        init?.signal?.addEventListener("abort", () => {
          seen.aborted = true;
          controller.error(init.signal!.reason);
        });
      },
      async pull(controller) {
        const next = pieces.shift();
        if (next !== undefined) return controller.enqueue(encoder.encode(next));
        if (!endsAfterDone) return await new Promise(() => {});
        await new Promise((r) => setTimeout(r, 20));
        seen.readToEnd = true;
        controller.close();
      },
      cancel() {
        seen.cancelled = true;
      },
    });
    return Promise.resolve(new Response(body));
  });
  return { provider: new OpenAIProvider(deps), seen };
}

Deno.test("after [DONE] the rest of the upstream body is read (so its connection is reused)", async () => {
  const { provider, seen } = lingering(true);
  const events = await collect(provider.chatStream(chatRequest({ stream: true }), callContext()));
  assert.equal(events.length, 7);
  await waitFor(() => seen.readToEnd, "the body read to its end");
  assert.deepEqual(seen, { readToEnd: true, aborted: false, cancelled: false });
});

Deno.test("after [DONE] a body that never ends is let go within the deadline", async () => {
  const { provider, seen } = lingering(false);
  const events = await collect(provider.chatStream(chatRequest({ stream: true }), callContext()));
  assert.equal(events.length, 7, "the client has every event without waiting for the body");
  await waitFor(() => seen.aborted, "the call aborted");
  assert.equal(seen.readToEnd, false);
});
