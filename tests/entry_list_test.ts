import assert from "node:assert/strict";
import { EntryList } from "../src/entry_list.ts";

Deno.test("EntryList: keeps the order values were added in, removes any entry in constant time", () => {
  const list = new EntryList<string>();
  assert.equal(list.first(), undefined);
  const a = list.add("a");
  const b = list.add("b");
  const c = list.add("c");
  const d = list.add("d");
  assert.deepEqual(list.values(), ["a", "b", "c", "d"]);
  assert.equal(list.size, 4);
  assert.equal(list.delete(b), true, "from the middle");
  assert.deepEqual(list.values(), ["a", "c", "d"]);
  assert.equal(list.delete(a), true, "the first");
  assert.equal(list.first(), "c");
  assert.equal(list.delete(d), true, "the last");
  assert.deepEqual(list.values(), ["c"]);
  list.add("e");
  assert.deepEqual(list.values(), ["c", "e"], "added after the new last");
  assert.equal(list.delete(c), true);
  assert.equal(list.delete(c), false, "twice");
  assert.deepEqual(list.values(), ["e"]);
  assert.equal(list.size, 1);
});

Deno.test("EntryList: a removed entry keeps neither its value nor its neighbours", () => {
  const list = new EntryList<{ n: number }>();
  list.add({ n: 1 });
  const middle = list.add({ n: 2 });
  list.add({ n: 3 });
  list.delete(middle);
  assert.equal(middle.value, undefined);
  assert.equal(middle.prev, null);
  assert.equal(middle.next, null);
  assert.equal(middle.list, null);
});

Deno.test("EntryList: an entry of another list is not removed; values() is a snapshot safe to remove from", () => {
  const one = new EntryList<number>();
  const two = new EntryList<number>();
  const entries = [1, 2, 3, 4].map((n) => one.add(n));
  const other = two.add(9);
  assert.equal(one.delete(other), false);
  assert.equal(two.size, 1);
  const seen: number[] = [];
  for (const n of one.values()) {
    seen.push(n);
    one.delete(entries[n - 1]!);
    if (n === 1) one.delete(entries[2]!); // a later one, while going through
  }
  assert.deepEqual(seen, [1, 2, 3, 4], "the snapshot");
  assert.equal(one.size, 0);
  one.add(5);
  one.add(6);
  one.clear();
  assert.equal(one.size, 0);
  assert.deepEqual(one.values(), []);
});
