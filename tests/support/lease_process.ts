/**
 * A process holding concurrency slots, for the lease test: opens the KV file `Deno.args[0]`,
 * takes `Deno.args[1]` slots of key `key_a` (cap `Deno.args[2]`) with leases of
 * `Deno.args[3]` ms, renewed as a live process renews them, prints "held" and waits to be
 * killed.
 */
import { systemClock } from "../../src/clock.ts";
import { GroupCommit } from "../../src/limits/group_commit.ts";
import { ConcurrencyLeases } from "../../src/limits/leases.ts";

const [path, slots, max, ttl] = Deno.args;
const kv = await Deno.openKv(path);
const leases = new ConcurrencyLeases({
  kv,
  clock: systemClock,
  commits: new GroupCommit(kv),
  ttlMs: Number(ttl),
});
for (let i = 0; i < Number(slots); i++) await leases.acquire("key_a", Number(max));
console.log("held");
// Renewal timers are unref'd; this keeps the process alive until it is killed.
setInterval(() => {}, 1000);
