/**
 * Run with `--v8-flags=--expose-gc` by `tests/perf/scavenge_test.ts`: sends chats (plain and
 * streamed, with bodies) through `app.handler` in this process, 32 at a time (anonymous, or with
 * `key` a key with every kind of limit: requests, tokens, budget, concurrency; or with `clients`
 * from 10,000 client addresses), then runs two
 * scavenges (minor collections) and prints how many of the requests' `Request` objects they
 * collected: a request that has ended should be garbage for a scavenge, not kept until the next
 * full collection by some long-lived structure it passed through.
 */
import { cannedOpenAIFetch } from "../../bench/fixtures.ts";
import { exposedGc, probeApp } from "./probe_app.ts";
import { KeyStore } from "../../src/auth/keys.ts";
import { systemClock } from "../../src/clock.ts";

const REQUESTS = Number(Deno.args[0] ?? 6000);
const KEYED = Deno.args[1] === "key";
/** `clients`: anonymous, from 10,000 client addresses in turn (each its own limit counters). */
const CLIENTS = Deno.args[1] === "clients" ? 10_000 : 1;
const gc = exposedGc();

const probe = await probeApp({
  prefix: "switchyard-scavenge-",
  id: "canned",
  style: "openai",
  fetch: cannedOpenAIFetch(3),
  model: { pricing: { input: 1, output: 2 } },
});
const { app, kv } = probe;

const high = { per_minute: 1_000_000_000, per_day: 1_000_000_000 };
const key = KEYED
  ? (await new KeyStore(kv, systemClock).create({
    name: "probe",
    limits: {
      chat: { ...high, tokens_per_minute: 1_000_000_000, tokens_per_day: 1_000_000_000 },
      other: high,
      images: high,
    },
    max_concurrent: 1000,
    budget: { per_day: 1_000_000, per_month: 1_000_000 },
  })).key
  : null;

let collected = 0;
const registry = new FinalizationRegistry(() => collected++);

async function one(i: number): Promise<void> {
  const body = JSON.stringify({
    model: "canned",
    stream: i % 2 === 1,
    messages: [{ role: "user", content: `Say hello, number ${i}.` }],
  });
  const request = new Request("http://127.0.0.1:8000/v1/chat/completions", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "content-length": String(body.length),
      ...(key ? { authorization: `Bearer ${key}` } : {}),
    },
    body,
  });
  registry.register(request, i);
  const info = {
    remoteAddr: {
      transport: "tcp",
      hostname: `10.0.${(i % CLIENTS) >> 8}.${(i % CLIENTS) & 255}`,
      port: 40000 + (i % 20000),
    },
    completed: Promise.resolve(),
  } as unknown as Deno.ServeHandlerInfo;
  const response = await app.handler(request, info);
  if (response.status !== 200) throw new Error(`status ${response.status}`);
  await response.text();
}

for (let sent = 0; sent < REQUESTS; sent += 32) {
  await Promise.all(Array.from({ length: 32 }, (_, k) => one(sent + k)));
}
// Settling (log records, the limiter's commits) finishes off the request path.
await new Promise((resolve) => setTimeout(resolve, 50));
gc({ type: "minor", execution: "sync" });
gc({ type: "minor", execution: "sync" });
await new Promise((resolve) => setTimeout(resolve, 20));
const afterScavenges = collected;
gc({ type: "major", execution: "sync" });
await new Promise((resolve) => setTimeout(resolve, 20));
console.log(JSON.stringify({ requests: REQUESTS, afterScavenges, afterFull: collected }));
await probe.close();
