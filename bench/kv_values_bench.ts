/**
 * Micro-benchmark of why KV's values are kept small (`src/kv/parts.ts`): a commit of 20
 * rate-limit counters (each checked and set, as the limiter's group commit makes them) on a KV
 * file holding 2,400 request-log rows of ~30 KB, in one value each (as before session 20) or in
 * parts of at most 800 bytes, and on one holding no log. Per iteration: one commit.
 * `deno task bench:micro`.
 */
import { cutParts } from "../src/kv/parts.ts";

const ROWS = 2400;
const COUNTERS = 10_000;
const line = JSON.stringify({
  ts: "2026-11-29T18:20:01.068Z",
  request_id: "req_3dc8040372ee459d84e95d2b1b4f1b07",
  method: "POST",
  path: "/v1/chat/completions",
  status: 200,
  ms: 1.74,
  ip: "10.0.10.96",
  key_id: null,
  model: "gpt-4o",
  provider: "openai",
  prompt_tokens: 12,
  completion_tokens: 7,
  error: null,
});
const row = new TextEncoder().encode(Array(100).fill(line).join("\n"));
const dir = await Deno.makeTempDir({ prefix: "switchyard-kv-values-bench-" });

const counterKey = (
  i: number,
): Deno.KvKey => ["ratelimit", "chat", "ip", `10.0.${i >> 8}.${i & 255}`];

/** A KV file with the log in `form`, and 10,000 counters; the counters' versionstamps. */
const stores: Deno.Kv[] = [];

async function store(form: "none" | "whole" | "parts") {
  const kv = await Deno.openKv(`${dir}/${form}.sqlite`);
  stores.push(kv);
  for (let r = 0; r < ROWS && form !== "none"; r += 8) {
    const op = kv.atomic();
    for (let j = 0; j < 8; j++) {
      const key = ["logs", 1_795_976_369_000 + r * 1000, crypto.randomUUID()];
      if (form === "whole") op.set(key, row);
      else {
        const parts = cutParts(row);
        parts.forEach((part, n) => op.set([...key, parts.length, n], part));
      }
    }
    await op.commit();
  }
  const versions: string[] = [];
  for (let i = 0; i < COUNTERS; i += 100) {
    const op = kv.atomic();
    for (let j = i; j < i + 100; j++) op.set(counterKey(j), [0, 1, 0, 1], { expireIn: 3_600_000 });
    const { versionstamp } = await op.commit() as Deno.KvCommitResult;
    for (let j = i; j < i + 100; j++) versions[j] = versionstamp;
  }
  let next = 0;
  /** One commit of the next 20 counters, checked on the versionstamps they have. */
  const commit = async () => {
    const op = kv.atomic();
    const taken: number[] = [];
    for (let k = 0; k < 20; k++) {
      const i = next++ % COUNTERS;
      taken.push(i);
      op.check({ key: counterKey(i), versionstamp: versions[i]! });
      op.set(counterKey(i), [0, 2, 0, 2], { expireIn: 3_600_000 });
    }
    const result = await op.commit();
    if (!result.ok) throw new Error("a counter's check failed");
    for (const i of taken) versions[i] = result.versionstamp;
  };
  return commit;
}

const none = await store("none");
const whole = await store("whole");
const parts = await store("parts");

Deno.bench("20 counters, no log in KV", { group: "commit", baseline: true }, none);
Deno.bench("20 counters, beside 2,400 log rows of 30 KB in one value each", {
  group: "commit",
}, whole);
Deno.bench("20 counters, beside the same rows in 800-byte parts", { group: "commit" }, parts);

globalThis.addEventListener("unload", () => {
  for (const kv of stores) kv.close();
  Deno.removeSync(dir, { recursive: true });
});
