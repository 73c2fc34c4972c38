import assert from "node:assert/strict";
import { parseArgs } from "../../src/args.ts";
import type { KeyRecord } from "../../src/auth/principal.ts";
import { fieldsToCreate, fieldsToUpdate, LIMIT_FLAGS } from "../../src/cli/key_flags.ts";

const SPEC = {
  values: ["name", "models", ...LIMIT_FLAGS],
  switches: ["preview", "no-preview"],
  mayBeEmpty: ["models"],
};
const args = (...line: string[]) => parseArgs(line, SPEC);

const RECORD: KeyRecord = {
  id: "key_1",
  name: "ci",
  hash: "0".repeat(64),
  created: 0,
  last_used: null,
  disabled: false,
  models: null,
  preview: false,
  limits: { chat: { per_minute: 100 }, images: { per_day: null } },
  budget: { per_day: 5 },
};

Deno.test("fieldsToCreate: a key's fields from the flags of create", () => {
  assert.deepEqual(
    fieldsToCreate(
      args("--name", "ci", "--models", "a, b*", "--preview", "--chat-per-minute", "100"),
    ),
    { name: "ci", models: ["a", "b*"], preview: true, limits: { chat: { per_minute: 100 } } },
  );
  assert.deepEqual(
    fieldsToCreate(args("--name=x", "--max-concurrent", "unlimited", "--budget-per-month=12.5")),
    { name: "x", max_concurrent: null, budget: { per_month: 12.5 } },
  );
  assert.deepEqual(fieldsToCreate(args("--name", "x", "--models", "all")).models, null);
});

Deno.test("fieldsToUpdate: changes over the key's own limits and budget; default removes one", () => {
  assert.deepEqual(
    fieldsToUpdate(
      args("--chat-per-minute", "default", "--other-per-day", "5", "--budget-per-month", "none"),
      RECORD,
    ),
    {
      limits: { images: { per_day: null }, other: { per_day: 5 } },
      budget: { per_day: 5, per_month: null },
    },
  );
  assert.deepEqual(fieldsToUpdate(args("--no-preview"), RECORD), { preview: false });
});

Deno.test("key flags: each refusal names the flag or the field", () => {
  const cases: [() => unknown, string][] = [
    [() => fieldsToCreate(args()), "create needs --name NAME"],
    [
      () => fieldsToCreate(args("--name", "x", "--chat-per-minute", "default")),
      '--chat-per-minute: expected a positive integer or "unlimited", not "default"',
    ],
    [
      () => fieldsToUpdate(args("--tokens-per-day", "0"), RECORD),
      '--tokens-per-day: expected a positive integer or "unlimited" or "default", not "0"',
    ],
    [
      () => fieldsToCreate(args("--name", "x", "--max-concurrent", "1.5")),
      '--max-concurrent: expected a positive integer or "unlimited", not "1.5"',
    ],
    [
      () => fieldsToCreate(args("--name", "x", "--budget-per-day", "lots")),
      '--budget-per-day: expected an amount in currency units (like 5 or 12.50) or "none", not "lots"',
    ],
    [() => fieldsToUpdate(args(), RECORD), "update needs at least one option to change"],
    [
      () => fieldsToUpdate(args("--preview", "--no-preview"), RECORD),
      "give --preview or --no-preview, not both",
    ],
  ];
  for (const [read, message] of cases) assert.throws(read, { name: "UsageError", message });
  assert.throws(() => fieldsToCreate(args("--name", "x", "--models", "bad id!")), {
    name: "UsageError",
    message: /^models\[0\]: expected a model id/,
  });
});

Deno.test("--cache on|off|default sets the key's use of the response cache", () => {
  assert.deepEqual(fieldsToCreate(args("--name", "x", "--cache", "on")), {
    name: "x",
    cache: true,
  });
  assert.deepEqual(fieldsToUpdate(args("--cache", "off"), RECORD), { cache: false });
  assert.deepEqual(fieldsToUpdate(args("--cache", "default"), RECORD), { cache: null });
  assert.throws(
    () => fieldsToUpdate(args("--cache", "yes"), RECORD),
    /--cache.*"on", "off" or "default"/,
  );
});

Deno.test("--guardrails JSON|none sets the key's guardrails, read as the admin API reads them", () => {
  const pii = '[{"type": "pii", "stage": "input", "action": "redact", "entities": ["email"]}]';
  assert.deepEqual(fieldsToCreate(args("--name", "x", "--guardrails", pii)), {
    name: "x",
    guardrails: [{
      type: "pii",
      name: "pii",
      stage: "input",
      action: "redact",
      on_error: "block",
      entities: ["email"],
    }],
  });
  assert.deepEqual(fieldsToUpdate(args("--guardrails", "none"), RECORD), { guardrails: null });
  assert.deepEqual(fieldsToUpdate(args("--guardrails", "[]"), RECORD), { guardrails: null });
});

Deno.test("--guardrails: not JSON, not an array, or a bad guardrail is a usage error naming the flag", () => {
  for (const bad of ["pii", "[{", '{"type": "pii"}', "42"]) {
    assert.throws(() => fieldsToUpdate(args("--guardrails", bad), RECORD), {
      name: "UsageError",
      message: /^--guardrails: expected a JSON array of guardrails/,
    }, bad);
  }
  assert.throws(
    () =>
      fieldsToCreate(
        args("--name", "x", "--guardrails", '[{"type": "pii", "stage": "input", "action": "zap"}]'),
      ),
    { name: "UsageError", message: /^--guardrails: guardrails\[0\]\.action: .*"redact"/ },
  );
  assert.throws(
    () => fieldsToUpdate(args("--guardrails", '[{"type": "nsfw"}]'), RECORD),
    { name: "UsageError", message: /^--guardrails: guardrails\[0\]\.type: / },
  );
  assert.throws(
    () =>
      fieldsToUpdate(
        args("--guardrails", '[{"type": "moderation", "stage": "input", "action": "redact"}]'),
        RECORD,
      ),
    { name: "UsageError", message: /^--guardrails: guardrails\[0\]\.action: .*not "redact"/ },
  );
});
