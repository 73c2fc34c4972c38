/**
 * Micro-benchmarks of the rate-limit check on a KV file (as in production): one request at a
 * time (each its own KV commit), and 32 at once (settled by one commit): per iteration.
 * `deno task bench:micro`.
 */
import { ANONYMOUS_CALLER } from "../src/auth/authenticate.ts";
import { KeyStore } from "../src/auth/keys.ts";
import { systemClock } from "../src/clock.ts";
import { parseConfig } from "../src/config/parse.ts";
import { RateLimiter } from "../src/limits/limiter.ts";

const dir = await Deno.makeTempDir({ prefix: "switchyard-limiter-bench-" });
const kv = await Deno.openKv(`${dir}/kv.sqlite`);
const high = { per_minute: 1_000_000_000, per_day: 1_000_000_000 };
const config = parseConfig({
  providers: [{ id: "sim", style: "simulator" }],
  limits: { anonymous: { chat: high }, key: { chat: high } },
}, "bench");
const keys = new KeyStore(kv, systemClock);
const limiter = new RateLimiter({ kv, clock: systemClock, limits: config.limits, keys });
const { key } = await keys.create({ name: "bench" });
const entry = (await keys.lookup((await import("../src/auth/keys.ts")).hashKey(key)))!;
const keyed = { kind: "key" as const, entry, verified: false };

Deno.bench("admit: an API key, one request", { group: "one" }, async () => {
  await limiter.admit("chat", keyed, "127.0.0.1");
});

Deno.bench("admit: anonymous, one request", { group: "one" }, async () => {
  await limiter.admit("chat", ANONYMOUS_CALLER, "127.0.0.1");
});

Deno.bench("admit: an API key, 32 requests at once", { group: "32" }, async () => {
  await Promise.all(Array.from({ length: 32 }, () => limiter.admit("chat", keyed, "127.0.0.1")));
});

globalThis.addEventListener("unload", () => {
  kv.close();
  Deno.removeSync(dir, { recursive: true });
});
