import assert from "node:assert/strict";
import { ConfigError } from "../src/config/error.ts";
import { parseConfig } from "../src/config/parse.ts";

const BASE = {
  providers: [{ id: "sim", style: "simulator" }],
  models: [{ id: "m", provider: "sim", chat_completions: true }],
};

Deno.test("site: defaults when absent, the given text when set", () => {
  assert.deepEqual(parseConfig(BASE, "c.json").site, {
    name: "Switchyard",
    description: "An OpenAI-compatible API in front of many models.",
    contact: null,
  });
  const site = {
    name: "Docks",
    description: "Models for the docks.",
    contact: "ops@docks.example",
  };
  assert.deepEqual(parseConfig({ ...BASE, site }, "c.json").site, site);
  assert.equal(parseConfig({ ...BASE, site: { contact: null } }, "c.json").site.contact, null);
});

Deno.test("site: a bad field is a config error naming it", () => {
  const cases: [unknown, RegExp][] = [
    [{ name: "" }, /site\.name/],
    [{ description: 7 }, /site\.description/],
    [{ contact: "x".repeat(2000) }, /site\.contact/],
    [{ title: "Docks" }, /site\.title/],
    ["Docks", /site/],
  ];
  for (const [site, field] of cases) {
    assert.throws(() => parseConfig({ ...BASE, site }, "c.json"), (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, /^c\.json: /);
      assert.match(e.message, field);
      return true;
    });
  }
});
