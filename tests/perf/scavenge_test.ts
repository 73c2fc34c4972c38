/**
 * What V8 keeps through scavenges (README, Performance): the requests that went through the
 * app must be garbage for a minor collection once they ended. Long-lived sets and maps with an
 * entry per request kept about a quarter of them until the next full collection (77.6% were
 * collected by two scavenges of 20,000 requests before, 99.5% after).
 */
import assert from "node:assert/strict";
import { runGcProbe } from "../support/process.ts";

/** What `scavenge_probe.ts` prints: requests sent, and how many were collected. */
interface ScavengeResult {
  requests: number;
  afterScavenges: number;
  afterFull: number;
}

for (const mode of ["anonymous", "key", "clients"]) {
  Deno.test(`scavenges collect the requests that have ended (${mode}): 20,000 chats through app.handler, at least 98% collected by two minor collections`, async () => {
    const result = await runGcProbe<ScavengeResult>("scavenge_probe.ts", ["20000", mode]);
    assert.equal(result.afterFull, result.requests, "a full collection takes them all");
    assert.ok(
      result.afterScavenges >= 0.98 * result.requests,
      `only ${result.afterScavenges} of ${result.requests} collected by scavenges`,
    );
  });
}
