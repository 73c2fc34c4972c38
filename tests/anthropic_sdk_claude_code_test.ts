/**
 * What Claude Code 2.1.332 sends (a captured request: `support/claude_code_request.json`),
 * through the official `@anthropic-ai/sdk` on a real port, on every back end: the simulator and
 * models behind the fake OpenAI-, Anthropic- and Gemini-style upstreams. Its beta headers, a
 * `role: "system"` message mid-conversation, a `defer_loading` tool, `context_management`,
 * adaptive thinking with `output_config.effort` and `metadata.user_id` are never a 4xx: a tool
 * round trip completes, `count_tokens` answers, and what a back end cannot honour is named in
 * `x-switchyard-dropped-params` (the Anthropic-style upstream gets it all, as written).
 */
import assert from "node:assert/strict";
import Anthropic from "npm:@anthropic-ai/sdk@1.12.0";
import { startGateway } from "./support/gateway.ts";
import type { FakeUpstream } from "./support/fake_upstream.ts";

const CHAT = { chat_completions: true, function_calling: true, image_input: true };
const SECRET = "pelican";

const FIXTURE = JSON.parse(
  Deno.readTextFileSync(new URL("./support/claude_code_request.json", import.meta.url)),
);
const BETAS: string[] = FIXTURE.headers["anthropic-beta"].split(",");
const [FIRST_USER, MID_SYSTEM] = FIXTURE.body.messages;

/** The SDK on the gateway without a key (its models are public), no retries. */
function client(url: string): Anthropic {
  return new Anthropic({
    baseURL: url,
    apiKey: "unused",
    maxRetries: 0,
    timeout: 10_000,
    // Anonymous: the client insists on a key, which is not sent.
    fetch: (url: string | URL | Request, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      headers.delete("authorization");
      headers.delete("x-api-key");
      return fetch(url, { ...init, headers });
    },
  });
}

/** Claude Code's first turn: its fields as captured, the conversation cut to the user's prompt
 * and the system message after it. */
function firstTurn(model: string): Record<string, unknown> {
  return { ...FIXTURE.body, model, messages: [FIRST_USER, MID_SYSTEM] };
}

/** The answer's blocks as the next request's assistant content. */
function asParams(content: Anthropic.Beta.BetaContentBlock[]): unknown[] {
  return content.map((b) => {
    switch (b.type) {
      case "thinking":
        return { type: "thinking", thinking: b.thinking, signature: b.signature };
      case "redacted_thinking":
        return { type: "redacted_thinking", data: b.data };
      case "tool_use":
        return { type: "tool_use", id: b.id, name: b.name, input: b.input };
      case "text":
        return { type: "text", text: b.text };
      default:
        throw new Error(`unexpected block ${b.type}`);
    }
  });
}

const BACK_ENDS: { name: string; model: string; fake: "openai" | "anthropic" | "gemini" | null }[] =
  [
    { name: "simulator", model: "sim-vision", fake: null },
    { name: "openai", model: "oa-chat", fake: "openai" },
    { name: "anthropic", model: "an-cc", fake: "anthropic" },
    { name: "gemini", model: "ge-chat", fake: "gemini" },
  ];

for (const backEnd of BACK_ENDS) {
  Deno.test(`anthropic-sdk/claude-code/${backEnd.name}: Claude Code's request, a tool round trip and count_tokens, all 2xx`, async () => {
    await using gateway = await startGateway({
      // Adaptive thinking and effort need a Claude model that has them.
      models: [{ id: "an-cc", provider: "an", upstream_model: "claude-sonnet-4-6", ...CHAT }],
    });
    const fake: FakeUpstream | null = backEnd.fake === null ? null : gateway[backEnd.fake];
    const sdk = client(gateway.server.url);
    const body = firstTurn(backEnd.model);

    const first = await sdk.beta.messages.stream({ ...body, betas: BETAS } as never)
      .withResponse();
    const dropped = first.response.headers.get("x-switchyard-dropped-params");
    const message = await first.data.finalMessage();
    assert.equal(message.stop_reason, "tool_use");
    const call = message.content.find((b) => b.type === "tool_use");
    assert.ok(call?.type === "tool_use");
    assert.equal(call.name, "Read");
    if (backEnd.fake === "anthropic") {
      // Forwarded as written: nothing dropped, the beta fields and headers arrive.
      assert.equal(dropped, null);
      const sent = fake!.received.at(-1)!;
      assert.deepEqual((sent.body as { context_management: unknown }).context_management, {
        edits: [{ type: "clear_thinking_20251015", keep: "all" }],
      });
      assert.equal(sent.headers.get("anthropic-beta"), BETAS.join(","));
    } else {
      const names = (dropped ?? "").split(",");
      for (const name of ["context_management", "defer_loading"]) {
        assert.ok(names.includes(name), `${name} in ${dropped}`);
      }
    }
    const mid = MID_SYSTEM.content as string;
    if (backEnd.fake === "openai") {
      // In place, after the user's prompt.
      const sent = fake!.received.at(-1)!.body as {
        messages: { role: string; content: unknown }[];
      };
      assert.deepEqual(sent.messages.map((m) => m.role), ["system", "user", "system"]);
      assert.equal(sent.messages[2]!.content, mid);
    }
    if (backEnd.fake === "gemini") {
      // Before the model's first answer: part of the system instruction.
      const sent = fake!.received.at(-1)!.body as {
        systemInstruction: { parts: { text: string }[] };
      };
      assert.equal(sent.systemInstruction.parts.at(-1)!.text, mid);
    }

    const second = await sdk.beta.messages.create({
      ...body,
      stream: false,
      betas: BETAS,
      messages: [
        FIRST_USER,
        MID_SYSTEM,
        { role: "assistant", content: asParams(message.content) },
        {
          role: "user",
          content: [{
            type: "tool_result",
            tool_use_id: call.id,
            content: `1\tThe secret word is ${SECRET}.`,
          }],
        },
      ],
    } as never) as Anthropic.Beta.BetaMessage;
    assert.equal(second.stop_reason, "end_turn");
    const text = second.content.map((b) => b.type === "text" ? b.text : "").join("");
    assert.match(text, new RegExp(SECRET));

    const { max_tokens: _max, stream: _stream, ...countable } = body;
    const count = await sdk.beta.messages.countTokens({ ...countable, betas: BETAS } as never);
    assert.ok(count.input_tokens > 0);

    if (fake) { for (const r of fake.received) assert.deepEqual(r.violations, [], r.path); }
  });
}
