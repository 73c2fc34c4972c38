/** The provider pages' examples (docs/providers.md, its pages per style, docs/routing.md) are
 * valid configs that enable what they say. */
import assert from "node:assert/strict";
import { parseConfig } from "../src/config/parse.ts";
import { Logger } from "../src/log/logger.ts";
import { createProviders } from "../src/providers/registry.ts";
import { FetchHttpClient } from "../src/http/client/fetch.ts";
import { CapturedOutput, FakeClock } from "./support/server.ts";

const pages = await Promise.all(
  [
    "providers",
    "provider-openai",
    "provider-anthropic",
    "provider-gemini",
    "provider-local",
    "routing",
  ].map((page) => Deno.readTextFile(new URL(`../docs/${page}.md`, import.meta.url))),
);
const examples = pages.flatMap((page) =>
  [...page.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!))
);

Deno.test("the README's provider examples are valid configs", () => {
  assert.equal(examples.length, 6);
  for (const example of examples) {
    const config = parseConfig(example, "docs/providers.md");
    const output = new CapturedOutput();
    const clock = new FakeClock();
    const providers = createProviders(config, {
      env: (name) => `key-for-${name}`,
      http: new FetchHttpClient(),
      clock,
      logger: new Logger({ clock, output }),
    });
    for (const model of config.models) assert.ok(providers.isAvailable(model.provider));
    assert.equal(output.err, "");
  }
});
