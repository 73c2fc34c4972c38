import assert from "node:assert/strict";
import { guardrailAttributes } from "../../src/telemetry/guardrail_attributes.ts";
import { SPAN_KIND_SERVER } from "../../src/telemetry/otel.ts";
import { recordingOtel } from "../support/recording_otel.ts";
import { startServer, testConfig } from "../support/server.ts";

Deno.test("guardrailAttributes: names, stages and verdicts in order, the guardrail that blocked, what was found by type", () => {
  const verdicts = [
    { name: "pii", stage: "input", verdict: "redacted", found: { email: 2, card: 1 } },
    { name: "key.words", stage: "input", verdict: "passed" },
    { name: "hook", stage: "output", verdict: "blocked", found: { email: 1, violence: 1 } },
  ] as const;
  assert.deepEqual(guardrailAttributes(verdicts), {
    "switchyard.guardrail.names": ["pii", "key.words", "hook"],
    "switchyard.guardrail.stages": ["input", "input", "output"],
    "switchyard.guardrail.verdicts": ["redacted", "passed", "blocked"],
    "switchyard.guardrail.blocked": "hook",
    "switchyard.guardrail.found": ["email:3", "card:1", "violence:1"],
  });
  // A guardrail that could not decide and stopped the call is the one that blocked.
  assert.equal(
    guardrailAttributes([{ name: "hook", stage: "input", verdict: "failed_closed" }])[
      "switchyard.guardrail.blocked"
    ],
    "hook",
  );
  assert.deepEqual(guardrailAttributes([]), {});
});

Deno.test("the server span of a chat call carries its guardrails' verdicts, never the values", async () => {
  const { api, spans } = recordingOtel();
  const chat = { provider: "sim", chat_completions: true };
  await using server = await startServer({
    telemetry: api,
    env: (name) => name === "OTEL_DENO" ? "true" : undefined,
    config: testConfig((raw) => {
      (raw.models as unknown[]).push(
        {
          id: "guarded",
          ...chat,
          guardrails: [
            { type: "pii", stage: "input", action: "redact" },
            { type: "deny", stage: "output", action: "log", patterns: ["[a-z]{1,40}"] },
          ],
        },
        {
          id: "strict",
          ...chat,
          guardrails: [{ type: "deny", stage: "input", action: "block", words: ["forbidden"] }],
        },
      );
    }),
  });
  const ask = async (model: string, text: string, stream = false) => {
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model, stream, messages: [{ role: "user", content: text }] }),
    });
    await res.text();
    const span = spans.filter((s) => s.kind === SPAN_KIND_SERVER).at(-1)!;
    assert.equal(span.ended, 1);
    const guardrail = Object.entries(span.attributes)
      .filter(([name]) => name.startsWith("switchyard.guardrail."));
    return { status: res.status, attributes: Object.fromEntries(guardrail) };
  };

  const redacted = await ask("guarded", "Mail jane.doe@example.com please");
  assert.equal(redacted.status, 200);
  assert.deepEqual(redacted.attributes["switchyard.guardrail.names"], ["pii", "deny"]);
  assert.deepEqual(redacted.attributes["switchyard.guardrail.stages"], ["input", "output"]);
  assert.deepEqual(redacted.attributes["switchyard.guardrail.verdicts"], ["redacted", "logged"]);
  const found = redacted.attributes["switchyard.guardrail.found"] as string[];
  assert.equal(found[0], "email:1");
  assert.match(found[1]!, /^denied:[1-9]\d*$/);
  assert.equal(redacted.attributes["switchyard.guardrail.blocked"], undefined);
  const text = JSON.stringify(spans, (_, v) => typeof v === "bigint" ? String(v) : v);
  assert.ok(!text.includes("jane.doe"), "no span shows the e-mail address");

  // A stream's span ends with the stream: its output guardrails' verdicts are there too.
  const streamed = await ask("guarded", "Mail jane.doe@example.com please", true);
  assert.equal(streamed.status, 200);
  assert.deepEqual(streamed.attributes["switchyard.guardrail.names"], ["pii", "deny"]);
  assert.deepEqual(streamed.attributes["switchyard.guardrail.verdicts"], ["redacted", "logged"]);
  assert.match((streamed.attributes["switchyard.guardrail.found"] as string[])[1]!, /^denied:/);

  const blocked = await ask("strict", "this is forbidden talk");
  assert.equal(blocked.status, 400);
  assert.deepEqual(blocked.attributes, {
    "switchyard.guardrail.names": ["deny"],
    "switchyard.guardrail.stages": ["input"],
    "switchyard.guardrail.verdicts": ["blocked"],
    "switchyard.guardrail.blocked": "deny",
    "switchyard.guardrail.found": ["denied:1"],
  });

  assert.deepEqual((await ask("sim-chat", "Mail jane.doe@example.com please")).attributes, {});
});
