import assert from "node:assert/strict";
import { keyView, readKeyFields } from "../../src/auth/key_fields.ts";
import { ValidationError } from "../../src/validation/error.ts";

function fieldError(value: unknown, mode: "create" | "update"): ValidationError {
  try {
    readKeyFields(value, mode as "update");
  } catch (e) {
    if (e instanceof ValidationError) return e;
    throw e;
  }
  throw new Error("no error");
}

Deno.test("key fields to create: name required, the rest optional and checked", () => {
  assert.deepEqual(readKeyFields({ name: "ci" }, "create"), { name: "ci" });
  assert.deepEqual(
    readKeyFields({
      name: "ci",
      models: ["sim-chat", "gpt-*"],
      preview: true,
      limits: { chat: { per_minute: 100, per_day: null }, images: {} },
    }, "create"),
    {
      name: "ci",
      models: ["sim-chat", "gpt-*"],
      preview: true,
      limits: { chat: { per_minute: 100, per_day: null }, images: {} },
    },
  );
  assert.deepEqual(readKeyFields({ name: "all", models: null }, "create"), {
    name: "all",
    models: null,
  });
  assert.equal(fieldError({}, "create").path, "name");
  assert.equal(fieldError({ name: "" }, "create").path, "name");
  assert.equal(fieldError({ name: "x".repeat(201) }, "create").path, "name");
  assert.equal(fieldError({ name: "a", models: "sim-chat" }, "create").path, "models");
  assert.equal(fieldError({ name: "a", models: ["ok", "bad id!"] }, "create").path, "models[1]");
  assert.equal(fieldError({ name: "a", models: [3] }, "create").path, "models[0]");
  assert.equal(fieldError({ name: "a", preview: "yes" }, "create").path, "preview");
  assert.equal(fieldError({ name: "a", limits: [] }, "create").path, "limits");
  assert.equal(fieldError({ name: "a", limits: { text: {} } }, "create").path, "limits.text");
  assert.equal(
    fieldError({ name: "a", limits: { chat: { per_minute: 0 } } }, "create").path,
    "limits.chat.per_minute",
  );
  assert.equal(
    fieldError({ name: "a", limits: { chat: { per_hour: 5 } } }, "create").path,
    "limits.chat.per_hour",
  );
  assert.equal(fieldError({ name: "a", disabled: true }, "create").path, "disabled");
  assert.equal(fieldError({ name: "a", key: "sk-sy-x" }, "create").path, "key");
});

Deno.test("key field errors read as every other 400 does", () => {
  const wording: [unknown, string, string][] = [
    [{}, "missing_required_parameter", "Missing required parameter: 'name'."],
    [{ name: 5 }, "invalid_type", "Invalid type for 'name': expected a string, but got a number."],
    [
      { name: "x".repeat(201) },
      "invalid_value",
      "Invalid value for 'name': expected at most 200 characters, but got 201.",
    ],
    [
      { name: "a", models: ["ok", "bad id!"] },
      "invalid_value",
      "Invalid value for 'models[1]': expected a model id or a glob with * of letters, digits and . _ : / - * (at most 128, starting with a letter, digit or *), but got \"bad id!\".",
    ],
    [
      { name: "a", models: "sim-chat" },
      "invalid_type",
      "Invalid type for 'models': expected an array of model ids or globs or null, but got a string.",
    ],
    [
      { name: "a", limits: { chat: { per_day: 0 } } },
      "invalid_value",
      "Invalid value for 'limits.chat.per_day': expected an integer of at least 1, but got 0.",
    ],
    [{ name: "a", disabled: true }, "unknown_parameter", "Unknown parameter: 'disabled'."],
  ];
  for (const [value, code, message] of wording) {
    const e = fieldError(value, "create");
    assert.deepEqual([e.status, e.type, e.code, e.message], [
      400,
      "invalid_request_error",
      code,
      message,
    ]);
  }
  // The CLI shows the same mistake as `path: reason`.
  assert.equal(
    fieldError({ name: 5 }, "create").fieldMessage(),
    "name: expected a string, but got a number",
  );
});

Deno.test("key fields to change: any subset, at least one, disabled allowed", () => {
  assert.deepEqual(readKeyFields({ disabled: true }, "update"), { disabled: true });
  assert.deepEqual(readKeyFields({ models: ["a"], name: "n" }, "update"), {
    name: "n",
    models: ["a"],
  });
  const empty = fieldError({}, "update");
  assert.equal(empty.path, "");
  assert.equal(empty.param, null);
  assert.match(empty.message, /^Invalid value for the request body: nothing to change/);
  assert.equal(fieldError({ disabled: 1 }, "update").path, "disabled");
  assert.equal(fieldError([], "update").param, null);
});

Deno.test("the public view of a key has no hash and ISO times", () => {
  const view = keyView({
    id: "key_1",
    name: "n",
    hash: "ab".repeat(32),
    created: Date.UTC(2026, 0, 15),
    last_used: null,
    disabled: false,
    models: null,
    preview: false,
    limits: {},
  });
  assert.ok(!("hash" in view));
  assert.equal(view.created, "2026-01-15T00:00:00.000Z");
  assert.equal(view.last_used, null);
});

Deno.test("key fields: chat limits take tokens per minute and per day; other scopes do not", () => {
  assert.deepEqual(
    readKeyFields(
      { limits: { chat: { tokens_per_minute: 200_000, tokens_per_day: null } } },
      "update",
    ),
    { limits: { chat: { tokens_per_minute: 200_000, tokens_per_day: null } } },
  );
  assert.equal(
    fieldError({ limits: { images: { tokens_per_minute: 5 } } }, "update").path,
    "limits.images.tokens_per_minute",
  );
  assert.equal(
    fieldError({ limits: { chat: { tokens_per_minute: 0 } } }, "update").path,
    "limits.chat.tokens_per_minute",
  );
});

Deno.test("key fields: a budget per day and month in currency units, or null for none", () => {
  assert.deepEqual(readKeyFields({ budget: { per_day: 5, per_month: 100.5 } }, "update"), {
    budget: { per_day: 5, per_month: 100.5 },
  });
  assert.deepEqual(readKeyFields({ budget: null }, "update"), { budget: null });
  assert.equal(fieldError({ budget: { per_day: -1 } }, "update").path, "budget.per_day");
  assert.equal(fieldError({ budget: { per_week: 1 } }, "update").path, "budget.per_week");
});
