import assert from "node:assert/strict";
import { BytePool } from "../../src/http/byte_pool.ts";

Deno.test("BytePool lends a buffer given back to the next loan of its size, not to another size", () => {
  const pool = new BytePool();
  const first = pool.take(100_000);
  assert.equal(first.length, 100_000);
  assert.equal(first.buffer.byteLength, 131_072, "sizes are powers of two");
  pool.give(first);
  assert.equal(pool.kept, 131_072);
  const second = pool.take(70_000);
  assert.equal(second.buffer, first.buffer, "the same size class: the same buffer");
  assert.equal(second.length, 70_000);
  assert.equal(pool.kept, 0);
  const other = pool.take(300_000);
  assert.notEqual(other.buffer, first.buffer);
});

Deno.test("BytePool keeps a buffer once however often it is given back, and none it did not lend", () => {
  const pool = new BytePool();
  const lent = pool.take(50_000);
  pool.give(lent);
  pool.give(lent);
  assert.equal(pool.kept, 65_536, "given twice, kept once");
  const a = pool.take(50_000);
  const b = pool.take(50_000);
  assert.notEqual(a.buffer, b.buffer, "never lent to two at once");
  pool.give(new Uint8Array(65_536));
  assert.equal(pool.kept, 0, "a buffer it never lent is not kept");
});

Deno.test("BytePool does not keep small buffers, nor more than its limit", () => {
  const pool = new BytePool(200_000);
  const small = pool.take(1000);
  pool.give(small);
  assert.equal(pool.kept, 0);
  const loans = [pool.take(100_000), pool.take(100_000), pool.take(100_000)];
  for (const loan of loans) pool.give(loan);
  assert.equal(pool.kept, 131_072, "a second 128 KiB buffer would pass 200,000 bytes");
});

Deno.test("BytePool.trim lets go of every kept buffer: the next loan is a new one", () => {
  const pool = new BytePool();
  const lent = pool.take(40_000);
  pool.give(lent);
  assert.equal(pool.kept, 65_536);
  pool.trim();
  assert.equal(pool.kept, 0);
  assert.notEqual(pool.take(40_000).buffer, lent.buffer);
});
