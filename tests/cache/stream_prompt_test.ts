/**
 * A stream through the response cache keeps none of its prompt either (as
 * tests/perf/stream_prompt_test.ts checks without a cache): the cache step lets go of the
 * canonical request once the upstream call is made, keeping only the key and, with a semantic
 * cache, the last user turn.
 */
import assert from "node:assert/strict";
import { runGcProbe } from "../support/process.ts";

for (const door of ["chat", "messages"]) {
  Deno.test(`a stream through the cache keeps none of its prompt: ${door} front door`, async () => {
    const { keptBytes, promptBytes } = await runGcProbe<
      { keptBytes: number; promptBytes: number }
    >("stream_prompt_probe.ts", ["openai", door, "cache"]);
    assert.ok(
      keptBytes < promptBytes / 4,
      `12 open streams kept ${keptBytes} bytes of heap; their prompts are ${promptBytes}`,
    );
  });
}
