import assert from "node:assert/strict";
import { mapBounded } from "../../src/moderation/map_bounded.ts";

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

Deno.test("mapBounded: results in order, never more than the limit running", async () => {
  let running = 0;
  let most = 0;
  const results = await mapBounded(
    [5, 1, 4, 2, 3, 0, 6],
    3,
    new AbortController().signal,
    async (n, i) => {
      running++;
      most = Math.max(most, running);
      for (let k = 0; k < n; k++) await tick();
      running--;
      return `${i}:${n * 10}`;
    },
  );
  assert.deepEqual(results, ["0:50", "1:10", "2:40", "3:20", "4:30", "5:0", "6:60"]);
  assert.equal(most, 3);
  assert.deepEqual(
    await mapBounded([], 4, new AbortController().signal, () => Promise.resolve(1)),
    [],
  );
});

Deno.test("mapBounded: the first failure aborts the running calls, starts no new one, and is thrown after all ended", async () => {
  const started: number[] = [];
  const aborted: number[] = [];
  const ended: number[] = [];
  const error = await mapBounded(
    [0, 1, 2, 3, 4, 5],
    3,
    new AbortController().signal,
    async (n, _i, signal) => {
      started.push(n);
      try {
        if (n === 1) {
          await tick();
          throw new Error("call 1 failed");
        }
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        aborted.push(n);
        throw new Error(`call ${n} aborted`);
      } finally {
        ended.push(n);
      }
    },
  ).catch((e) => e);
  assert.equal(error.message, "call 1 failed");
  assert.deepEqual(started, [0, 1, 2]);
  assert.deepEqual(aborted.sort(), [0, 2]);
  assert.deepEqual(ended.sort(), [0, 1, 2]);
});

Deno.test("mapBounded: the caller's signal reaches every call", async () => {
  const caller = new AbortController();
  const seen: boolean[] = [];
  const pending = mapBounded([1, 2], 2, caller.signal, async (_n, _i, signal) => {
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    seen.push(signal.aborted);
    throw signal.reason;
  });
  await tick();
  caller.abort(new Error("client gone"));
  await assert.rejects(pending, /client gone/);
  assert.deepEqual(seen, [true, true]);
});
