/**
 * docs/configuration.md cannot drift from the config readers: every field name a reader in
 * src/config/ reads (`f.string("name")`, `f.integer(...)`, `f.get(...)`...) appears in the page
 * in backticks, and every JSON example on the page is a config the readers accept.
 */
import assert from "node:assert/strict";
import { parseConfig } from "../src/config/parse.ts";

const ROOT = new URL("../", import.meta.url);
const PAGE = await Deno.readTextFile(new URL("docs/configuration.md", ROOT));
const READS =
  /\.(?:string|integer|number|boolean|array|object|oneOf|get|optional|has)\(\s*"([a-z_][a-z0-9_]*)"/g;

/** The field names the readers in src/config/ read. */
async function readFields(): Promise<Map<string, string>> {
  const fields = new Map<string, string>();
  for await (const entry of Deno.readDir(new URL("src/config/", ROOT))) {
    if (!entry.name.endsWith(".ts")) continue;
    const text = await Deno.readTextFile(new URL(`src/config/${entry.name}`, ROOT));
    for (const [, name] of text.matchAll(READS)) fields.set(name!, entry.name);
  }
  return fields;
}

Deno.test("docs: every config field the readers read is on the configuration page", async () => {
  const fields = await readFields();
  assert.ok(fields.size > 40, `read ${fields.size} field names`);
  const documented = new Set<string>();
  const words = (code: string) => code.split(/[^A-Za-z0-9_]+/).forEach((w) => documented.add(w));
  // Fenced examples count (their keys are fields); inline code is read after they are cut out,
  // so that a fence's backticks do not pair with inline ones.
  const prose = PAGE.replace(/```[a-z]*\n([\s\S]*?)```/g, (_, code: string) => {
    words(code);
    return "";
  });
  for (const [, code] of prose.matchAll(/`([^`]+)`/g)) words(code!);
  const missing = [...fields].filter(([name]) => !documented.has(name));
  assert.deepEqual(
    missing.map(([name, file]) => `${name} (src/config/${file})`),
    [],
    "fields read but not documented in docs/configuration.md",
  );
});

Deno.test("docs: every JSON config example on the configuration page is a valid config", () => {
  const examples = [...PAGE.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]!);
  assert.ok(examples.length > 0);
  let configs = 0;
  for (const example of examples) {
    const value = JSON.parse(example);
    // Fragments (one provider, one model) are checked where they are whole configs only.
    if (value === null || typeof value !== "object" || !("models" in value)) continue;
    configs++;
    assert.doesNotThrow(() => parseConfig(value, "docs/configuration.md"), example.slice(0, 200));
  }
  assert.ok(configs > 0, "at least one whole config example");
});
