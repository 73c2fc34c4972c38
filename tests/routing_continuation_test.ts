/**
 * A stream cut mid-way goes on on the next route (issue #15, `continue_on_failure`): two
 * Anthropic-style fakes tell the same story; the first is cut after a few tokens; the second
 * gets the partial answer as a prefill and tells the rest. The client sees one stream with the
 * whole story, nothing lost or repeated.
 */
import assert from "node:assert/strict";
import { postChat } from "./support/client.ts";
import type { Conversation } from "./support/fake_model.ts";
import type { FakeUpstream } from "./support/fake_upstream.ts";
import { STYLES } from "./support/provider_styles.ts";
import { startServer, testConfig } from "./support/server.ts";

const STORY =
  "Once upon a time a small gateway carried every token from one model to the next without losing a single word.";

/** Tells {@link STORY}, or with a prefill (the conversation ends with the assistant's text)
 * the rest of it. */
function storyteller(c: Conversation) {
  const last = c.turns.at(-1);
  const prefix = last?.role === "assistant" ? last.texts.join("") : "";
  return { text: STORY.startsWith(prefix) ? STORY.slice(prefix.length) : STORY, toolCalls: [] };
}

async function gateway(continueOnFailure: boolean) {
  const fakes = [STYLES[1]!.start(), STYLES[1]!.start()];
  for (const fake of fakes) fake.script = storyteller;
  const server = await startServer({
    random: () => 0,
    config: testConfig((raw) => {
      (raw.providers as unknown[]).push(
        ...fakes.map((fake, i) => ({
          id: `an${i}`,
          style: "anthropic",
          base_url: STYLES[1]!.baseUrl(fake.url),
          api_key_env: "FAKE_KEY",
          max_retries: 0,
        })),
      );
      (raw.models as unknown[]).push({
        id: "story",
        chat_completions: true,
        continue_on_failure: continueOnFailure,
        routes: [
          { provider: "an0", upstream_model: "claude-a" },
          { provider: "an1", upstream_model: "claude-b" },
        ],
      });
    }),
    env: (name) => name === "FAKE_KEY" ? fakes[0]!.apiKey : undefined,
  });
  return {
    server,
    fakes: fakes as [FakeUpstream, FakeUpstream],
    async [Symbol.asyncDispose]() {
      await server.close();
      for (const fake of fakes) await fake.close();
    },
  };
}

/** The text and the raw events of a streamed chat completion. */
async function streamedText(res: Response): Promise<{ text: string; raw: string }> {
  const raw = await res.text();
  let text = "";
  for (const line of raw.split("\n")) {
    if (!line.startsWith("data: {")) continue;
    const chunk = JSON.parse(line.slice(6));
    text += chunk.choices?.[0]?.delta?.content ?? "";
  }
  return { text, raw };
}

const ASK = {
  model: "story",
  stream: true,
  max_tokens: 200,
  messages: [{ role: "user", content: "Tell me a story." }],
};

Deno.test("continue_on_failure: a stream cut after 6 events goes on on the next route; the client gets the whole story once", async () => {
  await using g = await gateway(true);
  g.fakes[0].faults = [{ breakAfterEvents: 6 }];
  const res = await postChat(g.server, ASK);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("x-switchyard-route"), "an0/claude-a");
  const { text, raw } = await streamedText(res);
  assert.equal(text, STORY);
  assert.match(raw, /data: \[DONE\]/);
  assert.doesNotMatch(raw, /"error"/);
  // The second route was asked to go on from what the client had, as the assistant's prefill.
  const sent = g.fakes[1].last.body as {
    model: string;
    messages: { role: string; content: unknown }[];
  };
  assert.equal(sent.model, "claude-b");
  const prefill = sent.messages.at(-1)!;
  assert.equal(prefill.role, "assistant");
  const prefillText = typeof prefill.content === "string"
    ? prefill.content
    : (prefill.content as { text: string }[]).map((b) => b.text).join("");
  assert.ok(prefillText.length > 0 && STORY.startsWith(prefillText), prefillText);
  assert.equal(prefillText, prefillText.trimEnd());
  assert.deepEqual(g.fakes[1].violations, []);
});

Deno.test("continue_on_failure off: the cut stream ends with the error event, no other route is asked", async () => {
  await using g = await gateway(false);
  g.fakes[0].faults = [{ breakAfterEvents: 6 }];
  const res = await postChat(g.server, ASK);
  const { text, raw } = await streamedText(res);
  assert.ok(STORY.startsWith(text) && text.length < STORY.length);
  assert.match(raw, /"error"/);
  assert.doesNotMatch(raw, /\[DONE\]/);
  assert.equal(g.fakes[1].received.length, 0);
});
