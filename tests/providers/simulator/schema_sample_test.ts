import assert from "node:assert/strict";
import { ApiError } from "../../../src/errors.ts";
import { SchemaSampler } from "../../../src/providers/simulator/schema_sample.ts";
import { schemaErrors } from "../../support/json_schema.ts";

const AT = "response_format.json_schema.schema";
const ARGS = "tools[0].function.parameters";
/** The sampler's bound on the JSON of one reply's samples. */
const MAX_JSON = 256 * 1024;

function value(schema: Record<string, unknown>, text = ""): unknown {
  return new SchemaSampler(text).sampleValue(schema, AT);
}

function args(parameters: Record<string, unknown> | undefined, text = "") {
  return new SchemaSampler(text).sampleArguments(parameters, ARGS);
}

/** `run()`'s result, checked to take less than `ms`. */
function quickly<T>(run: () => T, ms = 1000): T {
  const start = performance.now();
  try {
    return run();
  } finally {
    const took = performance.now() - start;
    assert.ok(took < ms, `took ${took.toFixed(0)} ms`);
  }
}

/** Checks a bounded sample: its JSON is at most `max` characters. */
function bounded(sample: unknown, max = MAX_JSON): string {
  const json = JSON.stringify(sample);
  assert.ok(json.length <= max, `${json.length} characters of JSON`);
  return json;
}

/** Checks that `run` answers a 400 `invalid_value` naming `param`, quickly. */
function rejects(run: () => unknown, param: string): ApiError {
  let error: unknown;
  quickly(() => {
    try {
      run();
    } catch (e) {
      error = e;
    }
  });
  assert.ok(error instanceof ApiError, `no ApiError: ${String(error)}`);
  assert.equal(error.status, 400);
  assert.equal(error.code, "invalid_value");
  assert.equal(error.param, param);
  assert.ok(error.message.includes(`\`${param}\``), error.message);
  return error;
}

/** How deeply `value` nests objects and arrays. */
function depthOf(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

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
  const sample = args(WEATHER);
  assert.deepEqual(Object.keys(sample), [
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
  const { zone: _, ...declared } = sample;
  assert.deepEqual(
    schemaErrors({ ...WEATHER, required: WEATHER.required.slice(0, 4) }, declared),
    [],
  );
  assert.equal(sample.days, 3);
  assert.equal(sample.ratio, 1.5);
  assert.equal(sample.unit, "celsius");
  assert.equal((sample.tags as string[]).length, 2);
  assert.equal(typeof sample.zone, "string");
});

Deno.test("sampleArguments takes values the caller wrote as name=value when they fit", () => {
  const sample = args(
    WEATHER,
    'Weather please: city="New York", unit=fahrenheit, days=7, hourly=false.',
  );
  assert.equal(sample.city, "New York");
  assert.equal(sample.unit, "fahrenheit");
  assert.equal(sample.days, 7);
  assert.equal(sample.hourly, false);
  const misfit = args(WEATHER, "days=99 unit=kelvin");
  assert.equal(misfit.days, 3);
  assert.equal(misfit.unit, "celsius");
  const json = args(WEATHER, `{"city": "Bergen", "days": 4} and (unit: fahrenheit)`);
  assert.deepEqual([json.city, json.days, json.unit], ["Bergen", 4, "fahrenheit"]);
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
  const sample = value(schema) as Record<string, unknown>;
  assert.deepEqual(schemaErrors(schema, sample), []);
  assert.deepEqual(sample, { at: { x: 1 }, either: 5, both: { a: "example", b: 2 } });
  assert.deepEqual(args(undefined), {});
  assert.deepEqual(args({ type: "object" }), {});
});

Deno.test("a minItems, minContains or minProperties over the budget is a 400 naming it", () => {
  rejects(
    () => value({ type: "array", minItems: 1_000_000_000, items: { type: "string" } }),
    `${AT}.minItems`,
  );
  rejects(
    () =>
      args({
        type: "object",
        properties: { a: { type: "array", minItems: 1e9 } },
        required: ["a"],
      }),
    `${ARGS}.properties.a.minItems`,
  );
  rejects(
    () => value({ type: "array", contains: { type: "integer" }, minContains: 5000 }),
    `${AT}.minContains`,
  );
  rejects(() => value({ type: "object", minProperties: 1e12 }), `${AT}.minProperties`);
  const names = Array.from({ length: 5000 }, (_, i) => `p${i}`);
  rejects(() => value({ type: "object", required: names }), `${AT}.required`);
  const [items, contains, properties] = quickly(() => [
    value({ type: "array", minItems: 1000, items: { type: "integer" } }),
    value({ type: "array", contains: { const: "x" }, minContains: 3, prefixItems: [{}] }),
    value({ type: "object", minProperties: 50, additionalProperties: { type: "integer" } }),
  ]);
  assert.equal((items as unknown[]).length, 1000);
  assert.deepEqual(contains, ["example", "x", "x", "x"]);
  assert.equal(Object.keys(properties as object).length, 50);
});

Deno.test("a minLength or pattern needing a string over the budget is a 400 naming it", () => {
  rejects(() => value({ type: "string", minLength: 1e9 }), `${AT}.minLength`);
  rejects(() => value({ type: "string", pattern: "^a{1000000000}$" }), `${AT}.pattern`);
  rejects(() => value({ type: "string", pattern: "(((x{100}){100}){100})" }), `${AT}.pattern`);
  const error = rejects(
    () =>
      value({
        $defs: { ["n".repeat(5000)]: { minLength: 1e9 } },
        $ref: `#/$defs/${"n".repeat(5000)}`,
      }),
    `${AT}.$defs.${"n".repeat(100)}….minLength`,
  );
  assert.ok(error.message.length < 400);
  let nested: Record<string, unknown> = { minLength: 1e9 };
  for (let i = 0; i < 5000; i++) nested = { d: nested };
  const deep = quickly(() => {
    try {
      return value({ $defs: nested, $ref: `#/$defs${"/d".repeat(5000)}` });
    } catch (e) {
      return e;
    }
  });
  assert.ok(deep instanceof ApiError && deep.param !== null);
  assert.ok(deep.param.length <= 301 && deep.param.endsWith(".d.d.minLength"), deep.param);
  assert.ok(deep.message.length < 450);
  assert.equal(value({ type: "string", minLength: 10_000 }), "example".padEnd(10_000, "x"));
});

Deno.test("patterns are read to build a matching string, never run", () => {
  const cases = [
    "^[A-Z]{3}-\\d{4}$",
    "^(?:https?|ftp)://[a-z]+\\.example$",
    "^[^0-9a]+x*\\s?(y|z){2,5}$",
    "^(?<year>\\d{4})-(0[1-9]|1[0-2])$",
  ];
  for (const pattern of cases) {
    const sample = value({ type: "string", pattern }, `code=nope`) as string;
    assert.match(sample, new RegExp(pattern, "u"));
  }
  const schema = {
    type: "object",
    properties: { code: { type: "string", pattern: "(?=a)b" }, name: { type: "string" } },
  };
  assert.deepEqual(value(schema, "code=zz name=Ada"), { code: "example", name: "Ada" });
});

Deno.test("recursive $ref '#': optional recursive properties are left out", () => {
  for (const width of [3, 5, 50]) {
    const tree = {
      type: "object",
      properties: Object.fromEntries(
        Array.from({ length: width }, (_, i) => [`child${i}`, { $ref: "#" }]),
      ),
    };
    assert.equal(bounded(quickly(() => value(tree))), "{}");
  }
  const list = {
    type: "object",
    properties: { value: { type: "integer" }, next: { anyOf: [{ $ref: "#" }, { type: "null" }] } },
    required: ["value", "next"],
  };
  assert.deepEqual(value(list), { value: 1, next: null });
  const array = { type: "array", items: { $ref: "#" } };
  assert.deepEqual(value(array), []);
});

Deno.test("recursive $ref '#': a required chain is cut at a depth, a branching one is a 400", () => {
  const chain = {
    type: "object",
    properties: { next: { $ref: "#" }, n: { type: "integer" } },
    required: ["next", "n"],
  };
  const sample = quickly(() => value(chain));
  bounded(sample, 10_000);
  assert.ok(depthOf(sample) > 10 && depthOf(sample) <= 65, `depth ${depthOf(sample)}`);
  const branching = {
    type: "object",
    properties: { l: { $ref: "#" }, r: { $ref: "#" } },
    required: ["l", "r"],
  };
  rejects(() => args(branching), ARGS);
});

Deno.test("recursive $ref via $defs terminates the same way", () => {
  const node = {
    $defs: {
      node: {
        type: "object",
        properties: {
          label: { type: "string" },
          children: { type: "array", items: { $ref: "#/$defs/node" } },
          parent: { $ref: "#/$defs/node" },
        },
        required: ["label", "children"],
      },
    },
    $ref: "#/$defs/node",
  };
  assert.deepEqual(quickly(() => value(node)), { label: "example", children: [] });
  const mutual = {
    $defs: {
      a: { type: "object", properties: { b: { $ref: "#/$defs/b" } }, required: ["b"] },
      b: { type: "object", properties: { a: { $ref: "#/$defs/a" } }, required: ["a"] },
    },
    $ref: "#/$defs/a",
  };
  const chain = quickly(() => value(mutual));
  bounded(chain);
  assert.ok(depthOf(chain) > 10 && depthOf(chain) <= 65, `depth ${depthOf(chain)}`);
  const twice = {
    $defs: {
      n: {
        type: "object",
        properties: { l: { $ref: "#/$defs/n" }, r: { $ref: "#/$defs/n" } },
        required: ["l", "r"],
      },
    },
    $ref: "#/$defs/n",
  };
  rejects(() => value(twice), `${AT}.$defs.n`);
  const cycle = {
    $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } },
    $ref: "#/$defs/a",
  };
  bounded(quickly(() => value(cycle)));
  assert.deepEqual(value({ properties: { a: { $ref: "#/%E0%A4%A" } }, required: ["a"] }), {
    a: "example",
  });
});

Deno.test("wide and deep nesting: bounded when optional, a 400 when required", () => {
  const cube = {
    type: "array",
    minItems: 100,
    items: { type: "array", minItems: 100, items: { type: "array", minItems: 100, items: {} } },
  };
  rejects(() => value(cube), `${AT}.items.items.items`);
  let optional: Record<string, unknown> = { type: "string", minLength: 50 };
  for (let i = 0; i < 6; i++) {
    optional = {
      type: "object",
      properties: Object.fromEntries(Array.from({ length: 20 }, (_, j) => [`k${j}`, optional])),
    };
  }
  const sample = quickly(() => value(optional));
  assert.ok(bounded(sample).length > MAX_JSON / 4);
  let deep: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < 100_000; i++) deep = { type: "array", minItems: 1, items: deep };
  const nest = quickly(() => value(deep));
  bounded(nest);
  assert.ok(depthOf(nest) > 10 && depthOf(nest) <= 65, `depth ${depthOf(nest)}`);
  const wide = {
    type: "object",
    properties: Object.fromEntries(
      Array.from({ length: 100_000 }, (_, i) => [`p${i}`, { type: "string", minLength: 100 }]),
    ),
  };
  bounded(quickly(() => value(wide)));
});

Deno.test("combinators: nested, recursive and failing branches stay within the budget", () => {
  const web = {
    anyOf: Array.from({ length: 50 }, () => ({
      allOf: Array.from({ length: 50 }, () => ({ $ref: "#" })),
    })),
  };
  bounded(quickly(() => value(web)));
  let nested: Record<string, unknown> = { type: "integer" };
  for (let i = 0; i < 100_000; i++) {
    nested = i % 2 === 0 ? { anyOf: [nested, { $ref: "#" }] } : { allOf: [nested] };
  }
  bounded(quickly(() => value(nested)));
  const self = { allOf: [{ $ref: "#" }], properties: { a: { type: "string" } }, required: ["a"] };
  assert.deepEqual(value(self), { a: "example" });
  const hopeless = { oneOf: Array.from({ length: 200_000 }, () => ({ minLength: 1e9 })) };
  rejects(() => value(hopeless), `${AT}.oneOf[0].minLength`);
  let arrays: Record<string, unknown> = { type: "string", minLength: 64 };
  for (let i = 0; i < 3; i++) {
    arrays = { anyOf: [{ type: "array", minItems: 1000, items: arrays }, { type: "null" }] };
  }
  const sample = quickly(() => value(arrays));
  bounded(sample);
  assert.deepEqual(schemaErrors(arrays, sample), []);
  const fallback = { anyOf: [{ type: "string", minLength: 1e9 }, { type: "integer" }] };
  assert.equal(value(fallback), 1);
  const ignored = {
    type: "object",
    properties: { a: { type: "integer" } },
    not: { $ref: "#" },
    if: { $ref: "#" },
    then: { $ref: "#" },
    else: { $ref: "#" },
    dependentSchemas: { a: { $ref: "#" } },
  };
  assert.deepEqual(value(ignored), { a: 1 });
  const merged = {
    allOf: [{ type: "object", properties: { a: { type: "array", minItems: 1e9 } } }],
    required: ["a"],
  };
  rejects(() => value(merged), `${AT}.allOf[0].properties.a.minItems`);
});

Deno.test("optional content over the budget is left out, required content keeps its half", () => {
  const schema = {
    type: "object",
    properties: {
      huge: { type: "string", minLength: 1e9 },
      big: { type: "array", minItems: 1000, items: { type: "string", minLength: 1000 } },
      kept: { type: "integer" },
    },
    required: ["kept"],
  };
  assert.deepEqual(quickly(() => value(schema)), { kept: 1 });
  const constant = { const: "x".repeat(100_000) };
  const many = {
    type: "object",
    properties: Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`c${i}`, constant])),
    required: ["c999"],
  };
  const sample = quickly(() => value(many)) as Record<string, unknown>;
  assert.ok("c999" in sample);
  bounded(sample);
  rejects(
    () =>
      value({ type: "array", minItems: 5, items: { $ref: "#/$defs/c" }, $defs: { c: constant } }),
    `${AT}.$defs.c`,
  );
});

Deno.test("numbers with huge, contradictory or odd bounds are finite and quick", () => {
  const schema = {
    type: "object",
    properties: {
      a: { type: "integer", minimum: 1e308, multipleOf: 1e-308 },
      b: { type: "number", minimum: 5, maximum: 3 },
      c: { type: "integer", exclusiveMinimum: -1e300, exclusiveMaximum: -1e300 + 1 },
      d: { type: "number", multipleOf: 0.1, minimum: 0.05, maximum: 0.15 },
      e: { type: "integer", multipleOf: -3, maximum: -Number.MAX_VALUE },
    },
  };
  const sample = quickly(() => value(schema)) as Record<string, number>;
  for (const n of Object.values(sample)) assert.ok(Number.isFinite(n), String(n));
  assert.ok(Math.abs(sample.d! - 0.1) < 1e-9);
});

Deno.test("hints: many properties × a long text is read once, linearly", () => {
  const names = Array.from({ length: 5000 }, (_, i) => `field${i}`);
  const parameters = {
    type: "object",
    properties: Object.fromEntries(names.map((n) => [n, { type: "string" }])),
  };
  const pairs = names.map((n, i) => `${n}=v${i}`).join(", ");
  const text = `${"lorem ipsum ".repeat(150_000)} ${pairs} ${"a=".repeat(200_000)}"${
    "x".repeat(1e5)
  }`;
  const sample = quickly(() => args(parameters, text), 2000);
  assert.equal(sample.field0, "v0");
  assert.equal(sample.field4000, "v4000");
  bounded(sample);
  const hostile = [
    "a".repeat(2e6),
    "a=".repeat(1e6),
    '="'.repeat(1e6),
    `a=${".".repeat(2e6)}`,
    ("=" + " ".repeat(1000)).repeat(2000),
    "城市=北京 ".repeat(4e5),
  ];
  for (const text of hostile) bounded(quickly(() => args(parameters, text), 2000));
});

Deno.test("one sampler's budget is shared by every tool call of a reply", () => {
  const sampler = new SchemaSampler("");
  const parameters = {
    type: "object",
    properties: { a: { type: "array", minItems: 1000, items: { type: "string", minLength: 60 } } },
    required: ["a"],
  };
  let total = 0;
  const error = rejects(() => {
    for (let i = 0; i < 128; i++) {
      total +=
        JSON.stringify(sampler.sampleArguments(parameters, `tools[${i}].function.parameters`))
          .length;
    }
  }, "tools[4].function.parameters.properties.a.items");
  assert.ok(total <= MAX_JSON, String(total));
  assert.match(error.message, /262144 characters of JSON/);
});
