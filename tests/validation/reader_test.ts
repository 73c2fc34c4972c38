import assert from "node:assert/strict";
import { ValidationError } from "../../src/validation/error.ts";
import { type Fields, OPTIONAL, readJson, readRequest } from "../../src/validation/reader.ts";

/** The error `read` throws: its code, param and message. */
function error(
  read: () => unknown,
): { code: string | null; param: string | null; message: string } {
  try {
    read();
  } catch (e) {
    assert.ok(e instanceof ValidationError, `expected a ValidationError, got ${e}`);
    return { code: e.code, param: e.param, message: e.message };
  }
  assert.fail("no error");
}

Deno.test("a reader knows its path through objects and arrays", () => {
  const body = {
    messages: [{}, {}, { content: [{ image_url: { url: 5 } }] }],
  };
  const f = readRequest(body);
  const part = f.array("messages")[2]!.object().array("content")[0]!.object();
  const url = part.object("image_url").get("url");
  assert.equal(url.path, "messages[2].content[0].image_url.url");
  assert.deepEqual(error(() => url.string()), {
    code: "invalid_type",
    param: "messages[2].content[0].image_url.url",
    message:
      "Invalid type for 'messages[2].content[0].image_url.url': expected a string, but got a number.",
  });
  assert.equal(readJson([1]).array()[0]!.path, "[0]");
});

Deno.test("strings: required, optional, nullable, non-empty, length, pattern", () => {
  const f = readJson({ a: "x", e: "", n: null, long: "y".repeat(300) }).object();
  assert.equal(f.string("a"), "x");
  assert.equal(f.string("missing", OPTIONAL), undefined);
  assert.equal(f.string("n", { nullable: true }), null);
  assert.deepEqual(error(() => f.string("missing")), {
    code: "missing_required_parameter",
    param: "missing",
    message: "Missing required parameter: 'missing'.",
  });
  assert.equal(
    error(() => f.string("n")).message,
    "Invalid type for 'n': expected a string, but got null.",
  );
  assert.equal(
    error(() => readJson({ a: 1 }).object().string("a", { nullable: true })).message,
    "Invalid type for 'a': expected a string or null, but got a number.",
  );
  assert.equal(
    error(() => f.string("e", { nonEmpty: true })).message,
    `Invalid value for 'e': expected a non-empty string, but got "".`,
  );
  assert.equal(
    error(() => f.string("long", { maxLength: 256 })).message,
    "Invalid value for 'long': expected at most 256 characters, but got 300.",
  );
  const id = { pattern: /^[a-z]+$/, format: "lower-case letters" };
  assert.equal(f.string("a", id), "x");
  const bad = error(() => f.string("long", { pattern: /^x$/, format: "an x" }));
  assert.equal(bad.code, "invalid_value");
  // A caller's value is quoted briefly (quote.ts: at most 100 characters).
  assert.equal(
    bad.message,
    `Invalid value for 'long': expected an x, but got "${"y".repeat(99)}…".`,
  );
  assert.equal(
    error(() => readJson({ u: 3 }).object().string("u", { expected: "a string (a URL)" })).message,
    "Invalid type for 'u': expected a string (a URL), but got a number.",
  );
});

Deno.test("numbers and integers: finite, safe, within bounds", () => {
  const f = readJson({ t: 2.5, i: 1.5, big: 2 ** 60, neg: -3, ok: 7 }).object();
  assert.equal(f.integer("ok", { min: 1, max: 10 }), 7);
  assert.equal(f.number("t", { min: 0, max: 2.5 }), 2.5);
  assert.deepEqual(error(() => f.number("t", { min: 0, max: 2 })), {
    code: "invalid_value",
    param: "t",
    message: "Invalid value for 't': expected a number from 0 to 2, but got 2.5.",
  });
  assert.deepEqual(error(() => f.integer("i")), {
    code: "invalid_type",
    param: "i",
    message: "Invalid type for 'i': expected an integer, but got a number.",
  });
  assert.equal(error(() => f.integer("big")).code, "invalid_type");
  assert.equal(
    error(() => f.integer("neg", { min: 1 })).message,
    "Invalid value for 'neg': expected an integer of at least 1, but got -3.",
  );
  assert.equal(
    error(() => f.integer("ok", { max: 5 })).message,
    "Invalid value for 'ok': expected an integer of at most 5, but got 7.",
  );
  assert.equal(
    error(() => readJson({ x: Infinity }).object().number("x")).message,
    "Invalid type for 'x': expected a number, but got a non-finite number.",
  );
});

Deno.test("booleans and enums", () => {
  const f = readJson({ b: "yes", e: "max", n: 2, ok: "low" }).object();
  assert.equal(
    error(() => f.boolean("b")).message,
    "Invalid type for 'b': expected a boolean, but got a string.",
  );
  const EFFORTS = ["low", "medium", "high"] as const;
  assert.equal(f.oneOf("ok", EFFORTS), "low");
  assert.equal(f.oneOf("missing", EFFORTS, OPTIONAL), undefined);
  assert.deepEqual(error(() => f.oneOf("e", EFFORTS)), {
    code: "invalid_value",
    param: "e",
    message: `Invalid value for 'e': expected "low", "medium" or "high", but got "max".`,
  });
  assert.deepEqual(error(() => f.oneOf("n", EFFORTS)), {
    code: "invalid_type",
    param: "n",
    message: `Invalid type for 'n': expected "low", "medium" or "high", but got a number.`,
  });
});

Deno.test("arrays: a reader per item, bounds on the length", () => {
  const f = readJson({ list: ["a", "b", "c"], none: [] }).object();
  assert.deepEqual(f.array("list").map((item) => item.string()), ["a", "b", "c"]);
  assert.equal(f.array("missing", OPTIONAL), undefined);
  assert.deepEqual(error(() => f.array("list", { maxItems: 2 })), {
    code: "invalid_value",
    param: "list",
    message: "Invalid value for 'list': expected at most 2 items, but got 3.",
  });
  assert.equal(
    error(() => f.array("none", { minItems: 1 })).message,
    "Invalid value for 'none': expected at least 1 item, but got 0.",
  );
  assert.equal(
    error(() => readJson({ a: {} }).object().array("a", { expected: "an array of strings" }))
      .message,
    "Invalid type for 'a': expected an array of strings, but got an object.",
  );
});

Deno.test("OpenAI's convention: null is a field not sent; elsewhere null is a value", () => {
  const request = readRequest({ model: null, n: null, o: null });
  assert.equal(error(() => request.string("model")).code, "missing_required_parameter");
  assert.equal(request.integer("n", OPTIONAL), undefined);
  assert.equal(request.object("o", OPTIONAL), undefined);
  assert.equal(request.optional("o"), undefined);
  assert.equal(request.has("o"), false);
  const document = readJson({ models: null, n: null }).object();
  assert.equal(document.has("models"), true);
  assert.equal(document.array("models", { nullable: true }), null);
  assert.equal(
    error(() => document.integer("n", OPTIONAL)).message,
    "Invalid type for 'n': expected an integer, but got null.",
  );
  // A JSON schema inside a request means its nulls.
  const schema = readRequest({ s: { type: null } }).get("s").nullAsValue().object();
  assert.equal(error(() => schema.oneOf("type", ["object"], OPTIONAL)).code, "invalid_type");
});

Deno.test("objects: unknown keys rejected (config, admin) or kept as extras (OpenAI)", () => {
  const config = readJson({ port: 1, colour: "red" }).object();
  config.integer("port");
  assert.deepEqual(error(() => config.done()), {
    code: "unknown_parameter",
    param: "colour",
    message: "Unknown parameter: 'colour'.",
  });
  const nested = readJson({ server: { port: 1, prot: 2 } }).object().object("server");
  nested.integer("port");
  assert.equal(error(() => nested.done()).param, "server.prot");

  const body = readRequest({ model: "m", logprobs: true, store: null, stream: null });
  body.string("model");
  body.boolean("stream", OPTIONAL);
  assert.deepEqual(body.extras(), { logprobs: true, store: null });
  // Keys read as a map are all known; `has` does not read.
  const map = readJson({ a: 1, b: 2 }).object();
  assert.equal(map.has("a"), true);
  assert.deepEqual(map.extras(), { a: 1, b: 2 });
  assert.deepEqual(map.entries().map(([key, r]) => [key, r.path, r.value]), [
    ["a", "a", 1],
    ["b", "b", 2],
  ]);
  map.done();
});

Deno.test("objects of many keys are read and checked the same way", () => {
  const value: Record<string, number> = {};
  for (let i = 0; i < 100; i++) value[`k${i}`] = i;
  const f = readJson({ big: value }).object().object("big");
  for (let i = 0; i < 99; i++) assert.equal(f.integer(`k${i}`), i);
  assert.equal(f.integer("nope", OPTIONAL), undefined);
  assert.deepEqual(f.extras(), { k99: 99 });
  assert.equal(error(() => f.done()).param, "big.k99");
  assert.deepEqual(Object.keys(f.entries()).length, 100);
  f.done();
});

Deno.test("a reader makes the errors of its place for checks of the caller's own", () => {
  const f: Fields = readJson({ size: "big" }).object();
  const size = f.get("size");
  assert.equal(
    size.invalid(`expected WIDTHxHEIGHT, but got "big"`).message,
    `Invalid value for 'size': expected WIDTHxHEIGHT, but got "big".`,
  );
  assert.equal(
    f.get("x").missing("It says which.").message,
    "Missing required parameter: 'x'. It says which.",
  );
  assert.equal(f.reader.invalid("nothing to change").param, null);
  // A default in the place of an absent field keeps the path.
  const server = f.get("server");
  assert.equal(server.with({}).object().reader.path, "server");
  assert.equal(size.child(0, "x").path, "size[0]");
  assert.equal(
    error(() => f.get("server").with({ port: "x" }).object().integer("port")).param,
    "server.port",
  );
});
