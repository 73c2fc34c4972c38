import assert from "node:assert/strict";
import { ConfigError } from "../../src/config/error.ts";
import { parseConfig } from "../../src/config/parse.ts";

const SIM = { id: "sim", style: "simulator" };

/** A config with one chat model whose `guardrails` are `guardrails`. */
function withGuardrails(guardrails: unknown): Record<string, unknown> {
  return {
    providers: [SIM],
    models: [{ id: "m", provider: "sim", chat_completions: true, guardrails }],
  };
}

function configError(raw: unknown): string {
  try {
    parseConfig(raw, "switchyard.json");
  } catch (e) {
    assert.ok(e instanceof ConfigError, `expected a ConfigError, got ${e}`);
    return e.message;
  }
  assert.fail("the config was accepted");
}

Deno.test("config: guardrails are read with their defaults and names", () => {
  const config = parseConfig(
    withGuardrails([
      { type: "pii", stage: "input", action: "redact", restore: true, entities: ["email", "card"] },
      { type: "deny", stage: "input", action: "block", words: ["zeus"] },
      { type: "deny", stage: "output", action: "log", patterns: ["ticket-[0-9]{3,6}"] },
      {
        type: "webhook",
        name: "policy",
        stage: "input",
        action: "block",
        url: "https://x.example/check",
      },
    ]),
    "switchyard.json",
  );
  assert.deepEqual(config.models[0]!.guardrails, [
    {
      type: "pii",
      name: "pii",
      stage: "input",
      action: "redact",
      on_error: "block",
      entities: ["email", "card"],
      restore: true,
    },
    {
      type: "deny",
      name: "deny_2",
      stage: "input",
      action: "block",
      on_error: "block",
      words: ["zeus"],
    },
    {
      type: "deny",
      name: "deny_3",
      stage: "output",
      action: "log",
      on_error: "block",
      patterns: ["ticket-[0-9]{3,6}"],
    },
    {
      type: "webhook",
      name: "policy",
      stage: "input",
      action: "block",
      on_error: "block",
      url: "https://x.example/check",
      timeout_ms: 2000,
    },
  ]);
  // Absent or empty: no field at all (other models' entries fingerprint as before).
  assert.equal(
    "guardrails" in parseConfig(withGuardrails([]), "switchyard.json").models[0]!,
    false,
  );
});

Deno.test("config: a guardrail that could not work is refused, naming the field", () => {
  const cases: [unknown, RegExp][] = [
    [[{ type: "virus", stage: "input", action: "block" }], /guardrails\[0\]\.type/],
    [[{ type: "pii", stage: "middle", action: "block" }], /guardrails\[0\]\.stage/],
    [
      [{ type: "moderation", stage: "input", action: "redact" }],
      /guardrails\[0\]\.action.*not "redact"/,
    ],
    [[{ type: "pii", stage: "output", action: "redact", restore: true }], /restore/],
    [[{ type: "pii", stage: "input", action: "log", words: ["x"] }], /words.*only a deny/],
    [[{ type: "pii", stage: "input", action: "log", entities: ["dna"] }], /entities\[0\]/],
    [[{ type: "deny", stage: "input", action: "block" }], /needs words or patterns/],
    [
      [{ type: "deny", stage: "input", action: "block", patterns: ["(a+)+$"] }],
      /patterns\[0\].*unbounded/,
    ],
    [[{ type: "deny", stage: "input", action: "block", patterns: ["(x)\\1"] }], /backreferences/],
    [[{ type: "webhook", stage: "input", action: "block", url: "ftp://x" }], /url.*http/],
    [[{ type: "webhook", stage: "input", action: "block" }], /url/],
    [
      [{ type: "moderation", stage: "input", action: "block", categories: { violense: 0.5 } }],
      /did you mean "violence"/,
    ],
    [[{ type: "pii", stage: "input", action: "log", on_eror: "allow" }], /on_error/],
    [[{ type: "pii", stage: "input", action: "log" }, {
      type: "deny",
      name: "pii",
      stage: "input",
      action: "log",
      words: ["a"],
    }], /duplicate guardrail name/],
  ];
  for (const [guardrails, expected] of cases) {
    assert.match(configError(withGuardrails(guardrails)), expected, JSON.stringify(guardrails));
  }
});
