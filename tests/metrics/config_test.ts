import assert from "node:assert/strict";
import { ConfigError } from "../../src/config/error.ts";
import { parseConfig } from "../../src/config/parse.ts";

const base = (metrics?: unknown) => ({
  providers: [{ id: "sim", style: "simulator" }],
  ...(metrics === undefined ? {} : { metrics }),
});

Deno.test("config metrics: on by default, its token in SWITCHYARD_METRICS_TOKEN; null for none", () => {
  assert.deepEqual(parseConfig(base(), "c.json").metrics, {
    enabled: true,
    token_env: "SWITCHYARD_METRICS_TOKEN",
  });
  assert.deepEqual(parseConfig(base({ enabled: false, token_env: null }), "c.json").metrics, {
    enabled: false,
    token_env: null,
  });
  assert.equal(parseConfig(base({ token_env: "SCRAPE" }), "c.json").metrics.token_env, "SCRAPE");
});

Deno.test("config metrics: a wrong field is named", () => {
  for (
    const [metrics, message] of [
      [{ enabled: "yes" }, /metrics\.enabled/],
      [{ token_env: "" }, /metrics\.token_env/],
      [{ tokens: "x" }, /metrics\.tokens/],
    ] as const
  ) {
    assert.throws(() => parseConfig(base(metrics), "c.json"), (e) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, message);
      return true;
    });
  }
});
