/**
 * What V8 keeps through scavenges (README, Performance): the requests that went through the
 * app must be garbage for a minor collection once they ended. Long-lived sets and maps with an
 * entry per request kept about a quarter of them until the next full collection (77.6% were
 * collected by two scavenges of 20,000 requests before, 99.5% after).
 */
import assert from "node:assert/strict";
import { ROOT } from "./support/process.ts";

for (const mode of ["anonymous", "key", "clients"]) {
  Deno.test(`scavenges collect the requests that have ended (${mode}): 20,000 chats through app.handler, at least 98% collected by two minor collections`, async () => {
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--v8-flags=--expose-gc",
        "--allow-all",
        `${ROOT}tests/support/scavenge_probe.ts`,
        "20000",
        mode,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(code, 0, new TextDecoder().decode(stderr));
    const result = JSON.parse(new TextDecoder().decode(stdout).trim().split("\n").at(-1)!);
    assert.equal(result.afterFull, result.requests, "a full collection takes them all");
    assert.ok(
      result.afterScavenges >= 0.98 * result.requests,
      `only ${result.afterScavenges} of ${result.requests} collected by scavenges`,
    );
  });
}
