/**
 * Clients that leave before their answer: whatever the size of the request body, the upstream
 * call is aborted at once and the request is logged 499 (not 504 at the deadline). Deno's own
 * `request.signal` misses this for bodies that do not arrive with the request head, so these
 * tests send 10 KB bodies (see src/http/disconnect_watch.ts).
 */
import assert from "node:assert/strict";
import type { CanonicalEvent } from "../src/canonical/events.ts";
import type { CanonicalResult } from "../src/canonical/result.ts";
import type { Provider } from "../src/providers/types.ts";
import { postChat } from "./support/client.ts";
import { startServer, testConfig } from "./support/server.ts";
import { waitFor } from "./support/wait.ts";

/** A provider that answers nothing until its signal fires, and reports that it fired. */
function silentProvider() {
  const aborted = Promise.withResolvers<void>();
  const wait = (signal: AbortSignal) =>
    new Promise<never>((_, reject) => {
      signal.addEventListener("abort", () => {
        aborted.resolve();
        reject(signal.reason);
      }, { once: true });
    });
  const provider: Provider = {
    id: "sim",
    chat: (_req, ctx): Promise<CanonicalResult> => wait(ctx.signal),
    chatStream: (_req, ctx): AsyncIterable<CanonicalEvent[]> => ({
      [Symbol.asyncIterator]: () => ({ next: () => wait(ctx.signal) }),
    }),
  };
  return { provider, aborted: aborted.promise };
}

const PADDING = "The harbour master keeps a careful log of every ship. ".repeat(200);

for (const stream of [false, true]) {
  Deno.test(`a client that leaves a ${stream ? "stream before its first byte" : "non-streamed call"} with a 10 KB body aborts the upstream call and is logged 499`, async () => {
    const silent = silentProvider();
    await using server = await startServer({
      config: testConfig((raw) => {
        raw.providers = [{ id: "sim", style: "simulator", timeout_ms: 60_000 }];
      }),
      providers: new Map([["sim", silent.provider]]),
    });
    const controller = new AbortController();
    const body = {
      model: "sim-chat",
      messages: [{ role: "system", content: PADDING }, { role: "user", content: "Hello?" }],
      stream,
    };
    assert.ok(JSON.stringify(body).length > 10_000);
    const sent = postChat(server, body, { signal: controller.signal }).catch((e) => e);
    setTimeout(() => controller.abort(), 300);
    assert.ok((await sent) instanceof Error);
    const timeout = Promise.withResolvers<"timeout">();
    const timer = setTimeout(() => timeout.resolve("timeout"), 5000);
    const outcome = await Promise.race([silent.aborted, timeout.promise]);
    clearTimeout(timer);
    assert.notEqual(outcome, "timeout", "the upstream call was not aborted within 5 s");
    const record = await waitFor(
      () => server.output.records().find((r) => r.path === "/v1/chat/completions"),
      "the request's log record",
    );
    assert.equal(record.status, 499);
    assert.equal(record.error, "client_disconnected");
  });
}
