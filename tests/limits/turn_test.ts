import assert from "node:assert/strict";
import { TurnEnd } from "../../src/limits/turn.ts";

Deno.test("TurnEnd: waiters of one turn share one end, after the turn's promise jobs; the next turn has its own", async () => {
  const turn = new TurnEnd();
  const order: string[] = [];
  const first = turn.wait();
  assert.equal(turn.wait(), first, "the same promise for the same turn");
  first.then(() => order.push("end"));
  Promise.resolve().then(() => order.push("job"));
  await first;
  assert.deepEqual(order, ["job", "end"]);
  const next = turn.wait();
  assert.notEqual(next, first);
  await next;
});
