import assert from "node:assert/strict";
import { MAX_DEPTH, tooDeep } from "../../src/validation/depth.ts";

/** `{"a": {"a": ... {} }}` with `levels` objects in all. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

Deno.test("tooDeep: up to the limit passes, one level more is named by its path", () => {
  assert.equal(tooDeep(nested(MAX_DEPTH)), null);
  assert.equal(tooDeep(nested(MAX_DEPTH + 1)), Array(MAX_DEPTH).fill("a").join("."));
  assert.equal(tooDeep({ x: 1, s: "[[[[" }, 1), null);
  assert.equal(tooDeep({ x: [1, [2]] }, 2), "x[1]");
  assert.equal(tooDeep({ ok: [{}], bad: [[{ y: {} }]] }, 4), "bad[0][0].y");
});

Deno.test("tooDeep walks 100,000 levels without running out of stack", () => {
  let deep: unknown[] = [];
  for (let i = 0; i < 100_000; i++) deep = [deep];
  assert.equal(
    tooDeep({ tools: [{ parameters: deep }] })?.startsWith("tools[0].parameters[0]"),
    true,
  );
});
