import assert from "node:assert/strict";
import { toAnthropicStrictSchema } from "../../../src/providers/anthropic/strict_schema.ts";

/** What zod 4's `z.toJSONSchema` writes for an object with bounds, formats and a union. */
const ZOD = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: {
    name: { type: "string", minLength: 1, maxLength: 40, pattern: "^[A-Z]" },
    age: { type: "integer", minimum: 0, maximum: 150, description: "Years" },
    email: { type: "string", format: "email" },
    site: { type: "string", format: "hostname-ish" },
    tags: { type: "array", items: { type: "string" }, minItems: 1, maxItems: 5 },
    scores: { type: "array", items: { type: "number", exclusiveMinimum: 0 }, minItems: 2 },
    pet: {
      oneOf: [
        { type: "object", properties: { cat: { type: "boolean" } }, required: ["cat"] },
        { type: "null" },
      ],
    },
    kind: { type: "string", enum: ["a", "b"], default: "a" },
  },
  required: ["name", "age"],
  additionalProperties: true,
};

Deno.test("toAnthropicStrictSchema writes what structured outputs refuse into descriptions", () => {
  const before = structuredClone(ZOD);
  assert.deepEqual(toAnthropicStrictSchema(ZOD), {
    type: "object",
    properties: {
      name: { type: "string", description: '{minLength: 1, maxLength: 40, pattern: "^[A-Z]"}' },
      age: { type: "integer", description: "Years\n\n{minimum: 0, maximum: 150}" },
      email: { type: "string", format: "email" },
      site: { type: "string", description: '{format: "hostname-ish"}' },
      tags: { type: "array", items: { type: "string" }, minItems: 1, description: "{maxItems: 5}" },
      scores: {
        type: "array",
        items: { type: "number", description: "{exclusiveMinimum: 0}" },
        description: "{minItems: 2}",
      },
      pet: {
        anyOf: [
          {
            type: "object",
            properties: { cat: { type: "boolean" } },
            additionalProperties: false,
            required: ["cat"],
          },
          { type: "null" },
        ],
      },
      kind: { type: "string", enum: ["a", "b"], description: '{default: "a"}' },
    },
    additionalProperties: false,
    required: ["name", "age"],
  });
  assert.deepEqual(ZOD, before, "the input is not changed");
});

Deno.test("toAnthropicStrictSchema keeps $ref, $defs, definitions, const and allOf", () => {
  assert.deepEqual(
    toAnthropicStrictSchema({
      type: "object",
      properties: { a: { $ref: "#/$defs/A", description: "dropped with a $ref" } },
      $defs: { A: { type: "object", properties: { n: { const: 1 } } } },
      definitions: { B: { allOf: [{ type: "string", maxLength: 3 }] } },
    }),
    {
      $defs: {
        A: { type: "object", properties: { n: { const: 1 } }, additionalProperties: false },
      },
      definitions: { B: { allOf: [{ type: "string", description: "{maxLength: 3}" }] } },
      type: "object",
      properties: { a: { $ref: "#/$defs/A" } },
      additionalProperties: false,
    },
  );
});

Deno.test("toAnthropicStrictSchema: an object without properties gets an empty set", () => {
  assert.deepEqual(toAnthropicStrictSchema({ type: "object" }), {
    type: "object",
    properties: {},
    additionalProperties: false,
  });
  assert.deepEqual(toAnthropicStrictSchema({ type: ["string", "null"], format: "date" }), {
    type: ["string", "null"],
    format: "date",
  });
});
