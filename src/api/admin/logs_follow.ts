/**
 * `GET /admin/logs?follow=1`: a live tail of the request log as server-sent events, one `data:`
 * event per record, from every process on the same KV (read from the KV log, so records over
 * `logs.max_records_per_minute` are not shown). A comment opens the stream and keeps it alive
 * when nothing was sent for a while; it ends when the client leaves.
 */
import type { Clock } from "../../clock.ts";
import { SSE_HEADERS } from "../../http/sse.ts";
import type { LogRecord } from "../../log/record.ts";
import { LogTail } from "../../log/tail.ts";

const encoder = new TextEncoder();

/** Milliseconds between reads of the log's index (the KV log is written every 250 ms). */
const POLL_MS = 500;
/** Milliseconds without an event after which a keep-alive comment is sent (under the idle
 * timeouts of common proxies). */
const KEEP_ALIVE_MS = 15_000;

/** The SSE response following the log in `kv` from now on, with the records `matches` keeps. */
export function followLogs(
  kv: Deno.Kv,
  clock: Clock,
  matches: (record: LogRecord) => boolean,
  signal: AbortSignal,
): Response {
  const tail = new LogTail(kv, clock);
  let closed = false;
  let wake: (() => void) | null = null;
  const stop = () => {
    closed = true;
    wake?.();
  };
  signal.addEventListener("abort", stop, { once: true });
  const pause = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, POLL_MS);
      function done() {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });
  let quietSince = performance.now();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(": following the request log\n\n"));
    },
    async pull(controller) {
      while (!closed) {
        await pause();
        if (closed) break;
        const records = (await tail.next()).filter(matches);
        if (closed) break;
        if (records.length > 0) {
          let text = "";
          for (const record of records) text += `data: ${JSON.stringify(record)}\n\n`;
          controller.enqueue(encoder.encode(text));
          quietSince = performance.now();
          return;
        }
        if (performance.now() - quietSince >= KEEP_ALIVE_MS) {
          controller.enqueue(encoder.encode(": keep-alive\n\n"));
          quietSince = performance.now();
          return;
        }
      }
      controller.close();
    },
    cancel: stop,
  }, { highWaterMark: 0 });
  return new Response(body, { headers: SSE_HEADERS });
}
