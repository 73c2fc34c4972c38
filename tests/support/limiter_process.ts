/**
 * One "instance" for the cross-process limiter tests: opens the KV file in `Deno.args[0]`,
 * waits for the file `Deno.args[1]` to exist (so that both processes start together), then
 * admits `Deno.args[3]` rounds of one chat request from each of `Deno.args[2]` client IPs, all at
 * once, with the clock fixed in one minute. Prints how many requests of each IP were admitted,
 * as a JSON array.
 */
import { ANONYMOUS_CALLER } from "../../src/auth/authenticate.ts";
import { KeyStore } from "../../src/auth/keys.ts";
import { ApiError } from "../../src/errors.ts";
import { isKvBusy, kvBackoff } from "../../src/kv/busy.ts";
import { RateLimiter } from "../../src/limits/limiter.ts";
import { FakeClock, testConfig } from "./server.ts";

const [path, startFile, subjects, rounds] = Deno.args;
let kv: Deno.Kv | undefined;
for (let attempt = 1; !kv; attempt++) {
  try {
    kv = await Deno.openKv(path);
  } catch (e) {
    // Both processes opening the file at once can meet SQLite's lock.
    if (!isKvBusy(e) || attempt > 50) throw e;
    await kvBackoff(attempt);
  }
}
const clock = new FakeClock();
const limiter = new RateLimiter({
  kv,
  clock,
  limits: testConfig().limits,
  keys: new KeyStore(kv, clock),
});
while (!(await Deno.stat(startFile!).then(() => true, () => false))) {
  await new Promise((resolve) => setTimeout(resolve, 5));
}
const ips = Array.from({ length: Number(subjects) }, (_, i) => `10.0.${i >> 8}.${i & 255}`);
const admitted = new Array<number>(ips.length).fill(0);
await Promise.all(
  Array.from({ length: Number(rounds) }, () =>
    Promise.all(ips.map(async (ip, i) => {
      try {
        await limiter.admit("chat", ANONYMOUS_CALLER, ip);
        admitted[i]!++;
      } catch (e) {
        if (!(e instanceof ApiError) || e.status !== 429) throw e;
      }
    }))),
);
console.log(JSON.stringify(admitted));
kv.close();
