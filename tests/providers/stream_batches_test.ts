import assert from "node:assert/strict";
import { AnthropicProvider } from "../../src/providers/anthropic.ts";
import { OpenAIProvider } from "../../src/providers/openai.ts";
import type { Provider } from "../../src/providers/types.ts";
import type { ChatChunk } from "../../src/types/openai.ts";
import { callContext, chatRequest, collect, providerDeps } from "../support/provider_call.ts";
import { waitFor } from "../support/wait.ts";

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
  deps.fetch = () => {
    const body = ReadableStream.from(reads.map((r) => encoder.encode(r)));
    return Promise.resolve(
      new Response(body, { headers: { "content-type": "text/event-stream" } }),
    );
  };
  return style === "openai" ? new OpenAIProvider(deps) : new AnthropicProvider(deps);
}

/** What a chunk says, for comparing groups. */
function summary(chunk: ChatChunk): string {
  const c = chunk.choices[0];
  if (!c) return `usage ${chunk.usage?.total_tokens}`;
  if (c.finish_reason) return `finish ${c.finish_reason}`;
  return c.delta.role ? "role" : `content ${c.delta.content}`;
}

for (
  const [style, reads] of [["openai", OPENAI_READS], ["anthropic", ANTHROPIC_READS]] as const
) {
  Deno.test(`${style}: chatStreamBatches groups the chunks of each upstream read`, async () => {
    const groups: string[][] = [];
    const stream = adapter(style, reads).chatStreamBatches!(
      chatRequest({ stream: true }),
      callContext(),
    );
    for await (const group of stream) groups.push(group.map(summary));
    assert.deepEqual(groups, [
      ["role", "content Hel"],
      ["content lo", "finish stop", "usage 5"],
    ]);
  });

  Deno.test(`${style}: chatStream gives the same chunks one by one`, async () => {
    const request = chatRequest({ stream: true });
    const flat = await collect(adapter(style, reads).chatStream(request, callContext()));
    const grouped: ChatChunk[] = [];
    const stream = adapter(style, reads).chatStreamBatches!(request, callContext());
    for await (const group of stream) grouped.push(...group);
    assert.deepEqual(flat.map(summary), grouped.map(summary));
    assert.deepEqual(flat.map(summary), [
      "role",
      "content Hel",
      "content lo",
      "finish stop",
      "usage 5",
    ]);
  });
}

/** An OpenAI adapter whose upstream body sends `reads` and then, after the end marker, either
 * ends a little later or never ends; it records whether the body was read to its end or the
 * call was aborted. */
function lingering(endsAfterDone: boolean) {
  const deps = providerDeps("openai", "http://upstream.test/v1", "sk-up", { timeout_ms: 200 });
  const seen = { readToEnd: false, aborted: false, cancelled: false };
  deps.fetch = (_input, init) => {
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
  };
  return { provider: new OpenAIProvider(deps), seen };
}

Deno.test("after [DONE] the rest of the upstream body is read (so its connection is reused)", async () => {
  const { provider, seen } = lingering(true);
  const chunks = await collect(provider.chatStream(chatRequest({ stream: true }), callContext()));
  assert.equal(chunks.length, 5);
  await waitFor(() => seen.readToEnd, "the body read to its end");
  assert.deepEqual(seen, { readToEnd: true, aborted: false, cancelled: false });
});

Deno.test("after [DONE] a body that never ends is let go within the deadline", async () => {
  const { provider, seen } = lingering(false);
  const chunks = await collect(provider.chatStream(chatRequest({ stream: true }), callContext()));
  assert.equal(chunks.length, 5, "the client has every chunk without waiting for the body");
  await waitFor(() => seen.aborted, "the call aborted");
  assert.equal(seen.readToEnd, false);
});
