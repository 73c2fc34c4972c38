import assert from "node:assert/strict";
import { timedCommits } from "../../src/metrics/timed_kv.ts";

Deno.test("timedCommits: each atomic commit is timed, failed checks too; the rest is the store's", async () => {
  using kv = await Deno.openKv(":memory:");
  const seen: number[] = [];
  const timed = timedCommits(kv, (seconds) => seen.push(seconds));
  assert.equal((await timed.atomic().set(["a"], 1).commit()).ok, true);
  assert.equal((await timed.get(["a"])).value, 1);
  const stale = { key: ["a"], versionstamp: "00000000000000000000" };
  assert.equal((await timed.atomic().check(stale).set(["a"], 2).commit()).ok, false);
  await timed.set(["b"], 3);
  assert.equal(seen.length, 2, "two commits, not the get or the set");
  assert.ok(seen.every((s) => s >= 0 && s < 60));
});
