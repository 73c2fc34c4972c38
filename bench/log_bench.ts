/**
 * Micro-benchmarks of the request log: one record onto stdout's batch and into the KV sink's
 * queue (what the request path pays), and 200 records written to a KV file (what the flush
 * pays, off the request path). `deno task bench:micro`.
 */
import { systemClock } from "../src/clock.ts";
import { KvLogSink } from "../src/log/kv_sink.ts";
import { Logger } from "../src/log/logger.ts";
import type { LogRecord } from "../src/log/record.ts";

const dir = await Deno.makeTempDir({ prefix: "switchyard-log-bench-" });
const kv = await Deno.openKv(`${dir}/kv.sqlite`);
let written = 0;
const output = { stdout: (text: string) => void (written += text.length), stderr() {} };

function record(i: number): LogRecord {
  return {
    ts: new Date(Date.UTC(2026, 0, 15, 12, 0, 0) + i).toISOString(),
    request_id: `req_${i.toString(16).padStart(32, "0")}`,
    method: "POST",
    path: "/v1/chat/completions",
    status: 200,
    ms: 1.23,
    ip: "127.0.0.1",
    key_id: "key_abcdefghijklmnop",
    model: "bench-openai",
    provider: "bench",
    prompt_tokens: 12,
    completion_tokens: 7,
    error: null,
  };
}

const quiet = new Logger({ clock: systemClock, output, flushMs: 1_000_000 });
const queue = new KvLogSink({ kv, retentionDays: 30, intervalMs: 1_000_000 });
quiet.addSink(queue);
let n = 0;

Deno.bench("Logger.request: one record (stdout line + KV queue)", { group: "request" }, () => {
  quiet.request(record(n++));
  if (n % 1000 === 0) quiet.flush();
});

const logger = new Logger({ clock: systemClock, output, flushMs: 1_000_000 });
logger.addSink(new KvLogSink({ kv, retentionDays: 30, intervalMs: 1_000_000 }));

Deno.bench("200 records written to KV (one flush)", { group: "flush" }, async () => {
  for (let i = 0; i < 200; i++) logger.request(record(n++));
  await logger.flush();
});

globalThis.addEventListener("unload", () => {
  kv.close();
  Deno.removeSync(dir, { recursive: true });
});
