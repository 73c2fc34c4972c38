import assert from "node:assert/strict";
import { costMicros, fromMicros, worstCostMicros } from "../../src/limits/pricing.ts";

Deno.test("pricing: cost per million tokens, cached and written input at their own prices", () => {
  const pricing = { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 };
  // 1,000 plain input, 2,000 read from cache, 500 written to it, 400 output.
  const usage = { input: 3500, output: 400, cachedInput: 2000, cacheWrite: 500 };
  const micros = costMicros(usage, pricing);
  assert.equal(micros, 1000 * 3 + 2000 * 0.3 + 500 * 3.75 + 400 * 15);
  assert.equal(fromMicros(micros), 0.011475);
  // Without cache prices, cached input costs what input costs.
  assert.equal(costMicros(usage, { input: 1, output: 2 }), 3500 + 800);
  // The worst case prices every input token at the dearest input price.
  assert.equal(worstCostMicros(100, 10, pricing), Math.ceil(100 * 3.75 + 10 * 15));
});
