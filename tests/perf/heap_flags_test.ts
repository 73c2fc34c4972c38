/**
 * `deno task start`'s V8 flag: the young generation held to 32 MiB (two 16 MiB semi-spaces)
 * instead of V8's 64 MiB on 64-bit machines. Under 200 paced streams that is ~17% less peak
 * RSS for the same CPU (README, Deploying); these tests hold the flag's effect, and that it
 * still has one (V8's own default is larger).
 */
import assert from "node:assert/strict";
import { runScript, startFlags } from "../support/process.ts";

const START_FLAGS = await startFlags();

/** Allocates ~0.5 GB of short-lived objects, the last few batches surviving a while (as a
 * stream's do), then prints the young generation's size in MiB (~0.3 s, peak RSS ~250 MB). */
const SCRIPT = `
  import v8 from "node:v8";
  const kept = [];
  for (let round = 0; round < 300; round++) {
    const batch = [];
    for (let i = 0; i < 20000; i++) batch.push({ i, text: "chunk " + i });
    kept.push(batch);
    if (kept.length > 5) kept.shift();
  }
  const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
  console.log(space.space_size / 1048576);
`;

/** The young generation's size, in MiB, after the script's allocations under `flags`. */
async function youngGenerationMiB(flags: string[]): Promise<number> {
  return Number((await runScript(flags, SCRIPT)).trim());
}

Deno.test("deno task start's V8 flags hold the young generation to 32 MiB", async () => {
  assert.ok(START_FLAGS.includes("--v8-flags=--max-semi-space-size=16"), START_FLAGS.join(" "));
  const size = await youngGenerationMiB(START_FLAGS);
  assert.ok(size > 0 && size <= 32, `young generation ${size} MiB`);
});

Deno.test("without the flag V8's young generation grows past 32 MiB (the flag does something)", async () => {
  const flags = START_FLAGS.filter((flag) => !flag.startsWith("--v8-flags="));
  const size = await youngGenerationMiB(flags);
  assert.ok(size > 32, `young generation ${size} MiB without the flag`);
});
