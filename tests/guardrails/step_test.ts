import assert from "node:assert/strict";
import type { CanonicalRequest } from "../../src/canonical/conversation.ts";
import type { CanonicalEvent } from "../../src/canonical/events.ts";
import type { ModelRecord } from "../../src/catalogue/model.ts";
import type { GuardrailConfig } from "../../src/config/types.ts";
import { ApiError } from "../../src/errors.ts";
import { guardrails } from "../../src/guardrails/step.ts";
import type { RequestContext } from "../../src/pipeline/context.ts";
import type { CallContext, Provider } from "../../src/providers/types.ts";
import { textEvents, toolCallEvents } from "../support/events.ts";

const EMAIL = "jane@example.com";

/** A provider that records the request and streams `events` one per batch. */
function streaming(events: CanonicalEvent[], seen: CanonicalRequest[]): Provider {
  return {
    id: "fake",
    chat: () => Promise.reject(new Error("not used")),
    async *chatStream(req) {
      seen.push(req);
      for (const event of events) yield [event];
    },
  };
}

function request(text: string): CanonicalRequest {
  return {
    model: "m",
    messages: [
      { role: "system", parts: [{ type: "text", text: `Admin is ${EMAIL}.` }] },
      { role: "user", parts: [{ type: "text", text }] },
    ],
    options: {
      maxTokens: 10,
      maxTokensGiven: false,
      stop: [],
      output: { type: "text" },
      tools: [],
      toolChoice: null,
    },
    stream: true,
    includeUsage: false,
    extras: { protocol: "openai_chat", fields: {} },
  };
}

/** `provider` wrapped by guardrails `list`, and the request's context they report to. */
function wrap(list: GuardrailConfig[], provider: Provider) {
  const ctx = {
    signal: new AbortController().signal,
    principal: { kind: "anonymous" },
    model: "m",
    guardrails: null,
  } as unknown as RequestContext;
  const wrapped = guardrails({ http: {} as never, env: () => undefined })
    .around(provider, ctx, { guardrails: list } as ModelRecord, "chat")!;
  return { wrapped, ctx };
}

/** The stream of `provider` wrapped by guardrails `list`, gathered: the text and arguments sent. */
async function run(list: GuardrailConfig[], provider: Provider, req: CanonicalRequest) {
  const { wrapped, ctx } = wrap(list, provider);
  let text = "";
  let args = "";
  for await (const batch of wrapped.chatStream(req, {} as CallContext)) {
    assert.ok(batch.length > 0);
    for (const e of batch) {
      if (e.type === "block_delta" && e.delta.type === "text") text += e.delta.text;
      if (e.type === "block_delta" && e.delta.type === "arguments") args += e.delta.json;
    }
  }
  return { text, args, verdicts: ctx.guardrails };
}

/** An output `deny` guardrail named `name` with `action` and its words or patterns. */
function outputDeny(
  name: string,
  action: GuardrailConfig["action"],
  list: Pick<GuardrailConfig, "words" | "patterns">,
): GuardrailConfig {
  return { type: "deny", name, stage: "output", action, on_error: "block", ...list };
}

const REDACT: GuardrailConfig = {
  type: "pii",
  name: "pii",
  stage: "input",
  action: "redact",
  on_error: "block",
  restore: true,
};

Deno.test("step: placeholders split across stream deltas are restored, in text and tool-call arguments; the system prompt is redacted too", async () => {
  const seen: CanonicalRequest[] = [];
  const events = [
    ...textEvents(["Sure, writing to [EM", "AIL_", "1] and [EMAIL", "_2", "]."]).slice(0, 8),
    ...toolCallEvents(1, "call_1", "send", ['{"to": "[EMA', 'IL_2]"}']),
    { type: "finish", reason: "tool_calls" } as const,
  ];
  const out = await run([REDACT], streaming(events, seen), request("Mail bob@example.org please"));
  assert.equal(out.text, `Sure, writing to ${EMAIL} and bob@example.org.`);
  assert.equal(out.args, '{"to": "bob@example.org"}');
  assert.deepEqual(seen[0]!.messages.map((m) => (m.parts[0] as { text: string }).text), [
    "Admin is [EMAIL_1].",
    "Mail [EMAIL_2] please",
  ]);
  assert.deepEqual(out.verdicts, [{
    name: "pii",
    stage: "input",
    verdict: "redacted",
    found: { email: 2 },
  }]);
});

Deno.test("step: an output deny word split across deltas is caught; a block throws from the stream after text was sent", async () => {
  const deny = outputDeny("no-zeus", "block", { words: ["project zeus"] });
  const pieces = [..."x ".repeat(150).match(/.{1,7}/g)!, "about Proj", "ect Ze", "us."];
  const sent: string[] = [];
  const { wrapped } = wrap([deny], streaming(textEvents(pieces), []));
  await assert.rejects(
    async () => {
      for await (const batch of wrapped.chatStream(request("hi"), {} as CallContext)) {
        for (const e of batch) {
          if (e.type === "block_delta" && e.delta.type === "text") {
            sent.push(e.delta.text);
          }
        }
      }
    },
    (e) => e instanceof ApiError && e.code === "guardrail_blocked" && e.message.includes("no-zeus"),
  );
  const text = sent.join("");
  assert.ok(text.length > 100 && !/zeus/i.test(text), text);
});

Deno.test("step: a deny pattern's match longer than the default hold, split across deltas, is caught whole", async () => {
  const deny = outputDeny("tokens", "redact", { patterns: ["begin-[a-z]{1,200}-end"] });
  // No start of the match is a match of its own: only the whole of it can be recognised.
  const secret = "begin-" + "abcdefghij".repeat(15) + "-end";
  const text = "x ".repeat(100) + secret + " done.";
  const out = await run([deny], streaming(textEvents(text.match(/.{1,9}/gs)!), []), request("hi"));
  assert.ok(!out.text.includes("abcdefghij"), out.text);
  assert.ok(out.text.includes("[DENIED_1] done."), out.text);
});
