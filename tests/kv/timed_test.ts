import assert from "node:assert/strict";
import { timed } from "../../src/kv/timed.ts";

Deno.test("timed: each commit is reported once it settles, failed ones too; without an observer nothing is added", async () => {
  using kv = await Deno.openKv(":memory:");
  const seen: number[] = [];
  const observe = (seconds: number) => seen.push(seconds);
  assert.equal((await timed(kv.atomic().set(["a"], 1).commit(), observe)).ok, true);
  const stale = { key: ["a"], versionstamp: "00000000000000000000" };
  assert.equal((await timed(kv.atomic().check(stale).set(["a"], 2).commit(), observe)).ok, false);
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(seen.length, 2);
  assert.ok(seen.every((s) => s >= 0 && s < 60));
  const commit = kv.atomic().set(["b"], 1).commit();
  assert.equal(timed(commit), commit);
  await commit;
});
