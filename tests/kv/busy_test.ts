import assert from "node:assert/strict";
import { isKvBusy, retryWhileBusy } from "../../src/kv/busy.ts";

const locked = () => new TypeError("database is locked");

Deno.test("isKvBusy recognises SQLite's lock error only", () => {
  assert.equal(isKvBusy(locked()), true);
  assert.equal(isKvBusy(new Error("Database is locked")), true);
  assert.equal(isKvBusy(new TypeError("invalid cursor")), false);
  assert.equal(isKvBusy("database is locked"), false);
});

Deno.test("retryWhileBusy retries a busy store, and only that", async () => {
  let calls = 0;
  assert.equal(
    await retryWhileBusy(() => {
      calls++;
      return calls < 4 ? Promise.reject(locked()) : Promise.resolve("done");
    }),
    "done",
  );
  assert.equal(calls, 4);
  calls = 0;
  await assert.rejects(
    retryWhileBusy(() => {
      calls++;
      return Promise.reject(locked());
    }, 3),
    /database is locked/,
  );
  assert.equal(calls, 3);
  calls = 0;
  await assert.rejects(
    retryWhileBusy(() => {
      calls++;
      return Promise.reject(new RangeError("other"));
    }),
    /other/,
  );
  assert.equal(calls, 1);
});
