import assert from "node:assert/strict";
import { sampleArguments, sampleValue } from "../../../src/providers/simulator/schema_sample.ts";
import { schemaErrors } from "../../support/json_schema.ts";

const WEATHER = {
  type: "object",
  properties: {
    city: { type: "string", minLength: 2 },
    unit: { type: "string", enum: ["celsius", "fahrenheit"] },
    days: { type: "integer", minimum: 3, maximum: 10 },
    ratio: { type: "number", exclusiveMinimum: 1, multipleOf: 0.5 },
    hourly: { type: "boolean" },
    when: { type: "string", format: "date" },
    contact: { type: "string", format: "email" },
    tags: { type: "array", items: { type: "string" }, minItems: 2 },
    where: {
      type: "object",
      properties: { lat: { type: "number", minimum: -90, maximum: 90 } },
      required: ["lat"],
    },
    note: { type: ["string", "null"], maxLength: 3 },
  },
  required: ["city", "unit", "days", "where", "zone"],
  additionalProperties: false,
};

Deno.test("sampleArguments gives every property, of its type, within its constraints", () => {
  const args = sampleArguments(WEATHER, "");
  assert.deepEqual(Object.keys(args), [
    "city",
    "unit",
    "days",
    "ratio",
    "hourly",
    "when",
    "contact",
    "tags",
    "where",
    "note",
    "zone",
  ]);
  const { zone: _, ...declared } = args;
  assert.deepEqual(
    schemaErrors({ ...WEATHER, required: WEATHER.required.slice(0, 4) }, declared),
    [],
  );
  assert.equal(args.days, 3);
  assert.equal(args.ratio, 1.5);
  assert.equal(args.unit, "celsius");
  assert.equal((args.tags as string[]).length, 2);
  assert.equal(typeof args.zone, "string");
});

Deno.test("sampleArguments takes values the caller wrote as name=value when they fit", () => {
  const args = sampleArguments(
    WEATHER,
    'Weather please: city="New York", unit=fahrenheit, days=7, hourly=false.',
  );
  assert.equal(args.city, "New York");
  assert.equal(args.unit, "fahrenheit");
  assert.equal(args.days, 7);
  assert.equal(args.hourly, false);
  const misfit = sampleArguments(WEATHER, "days=99 unit=kelvin");
  assert.equal(misfit.days, 3);
  assert.equal(misfit.unit, "celsius");
});

Deno.test("sampleValue follows $ref, anyOf, allOf and const", () => {
  const schema = {
    $defs: { point: { type: "object", properties: { x: { type: "integer" } }, required: ["x"] } },
    type: "object",
    properties: {
      at: { $ref: "#/$defs/point" },
      either: { anyOf: [{ type: "null" }, { type: "integer", minimum: 5 }] },
      both: {
        allOf: [
          { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
          { properties: { b: { const: 2 } }, required: ["b"] },
        ],
      },
    },
    required: ["at", "either", "both"],
  };
  const value = sampleValue(schema, "") as Record<string, unknown>;
  assert.deepEqual(schemaErrors(schema, value), []);
  assert.deepEqual(value, { at: { x: 1 }, either: 5, both: { a: "example", b: 2 } });
  assert.deepEqual(sampleArguments(undefined, ""), {});
  assert.deepEqual(sampleArguments({ type: "object" }, ""), {});
});

Deno.test("sampleValue stops at self-referencing schemas", () => {
  const tree = { type: "object", properties: { child: { $ref: "#" } } };
  const value = sampleValue(tree, "");
  assert.equal(typeof value, "object");
});
