import assert from "node:assert/strict";
import { Expiries } from "../../src/http/expiries.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("Expiries: a limit fires once after its time, one cleared never, one restarted later", async () => {
  const timers = new Expiries(5);
  const fired: string[] = [];
  timers.after(20, () => fired.push("a"));
  const b = timers.after(20, () => fired.push("b"));
  const c = timers.after(20, () => fired.push("c"));
  b.clear();
  c.restart(80);
  await sleep(50);
  assert.deepEqual(fired, ["a"]);
  await sleep(80);
  assert.deepEqual(fired, ["a", "c"]);
  await sleep(30);
  assert.deepEqual(fired, ["a", "c"], "each fires once");
});

Deno.test("Expiries: a held limit (at = Infinity) does not fire until restarted", async () => {
  const timers = new Expiries(5);
  let fired = 0;
  const held = timers.after(10, () => fired++);
  held.at = Infinity;
  await sleep(40);
  assert.equal(fired, 0);
  held.restart(5);
  await sleep(40);
  assert.equal(fired, 1);
});

Deno.test("Expiries.tickFor: a twentieth of the limit, between 5 and 250 ms", () => {
  assert.equal(Expiries.tickFor(30_000), 250);
  assert.equal(Expiries.tickFor(1000), 50);
  assert.equal(Expiries.tickFor(20), 5);
});
