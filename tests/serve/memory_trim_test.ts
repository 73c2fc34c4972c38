import assert from "node:assert/strict";
import { IdleTrimmer, LIBC_PATHS, libcTrim } from "../../src/serve/memory_trim.ts";
import { ROOT, runScript, startFlags } from "../support/process.ts";

/** Whether `path` is a file on this machine. */
function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** A trimmer whose ticks the test drives, with a counter of trims. */
function driven() {
  let activity = 0;
  let trims = 0;
  const trimmer = new IdleTrimmer({
    trim: () => trims++,
    activity: () => activity,
    intervalMs: 60_000,
  });
  return {
    trimmer,
    act: () => activity++,
    trims: () => trims,
  };
}

Deno.test("IdleTrimmer: trims once after a whole interval without activity, then not until the next busy spell", () => {
  const t = driven();
  try {
    t.trimmer.tick();
    assert.equal(t.trims(), 0, "nothing happened since start: nothing to give back");
    t.act();
    t.trimmer.tick();
    assert.equal(t.trims(), 0, "busy during this interval");
    t.act();
    t.trimmer.tick();
    assert.equal(t.trims(), 0, "still busy");
    t.trimmer.tick();
    assert.equal(t.trims(), 1, "a whole interval quiet after a busy one");
    t.trimmer.tick();
    t.trimmer.tick();
    assert.equal(t.trims(), 1, "once per quiet spell");
    t.act();
    t.trimmer.tick();
    assert.equal(t.trims(), 1);
    t.trimmer.tick();
    assert.equal(t.trims(), 2, "the next quiet spell");
  } finally {
    t.trimmer.close();
  }
});

Deno.test("libcTrim: null when no listed library can be opened, a working malloc_trim when one can", () => {
  assert.equal(libcTrim([`${ROOT}no-such-dir/libc.so.6`]), null);
  const present = LIBC_PATHS.filter(isFile);
  const trim = libcTrim();
  if (present.length === 0) return assert.equal(trim, null);
  assert.ok(trim, `glibc at ${present[0]} but no malloc_trim`);
  trim();
});

/** The flags of a deno.json task, between `deno run` and `main.ts`. */
async function taskFlags(task: string): Promise<string[]> {
  const words: string[] = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks[task]
    .split(" ");
  return words.slice(2, words.indexOf("main.ts")).filter((w) => w.startsWith("--allow-"));
}

/** What libcTrim gives under `flags`, and whether another library opens. */
async function trimUnder(flags: string[]): Promise<{ trim: boolean; other: string }> {
  const script = `
    import { libcTrim } from "${ROOT}src/serve/memory_trim.ts";
    const trim = libcTrim();
    trim?.();
    let other = "opened";
    try { Deno.dlopen("/lib/x86_64-linux-gnu/libm.so.6", {}); } catch (e) { other = e.name; }
    console.log(JSON.stringify({ trim: trim !== null, other }));`;
  // The script is read from stdin by a process that may read its own source (src/).
  return JSON.parse(await runScript(flags, script));
}

Deno.test("libcTrim: deno task start grants no FFI, so nothing is trimmed; start:trim grants it for libc only", async () => {
  assert.deepEqual(
    await trimUnder(await startFlags().then((f) => f.filter((w) => w.startsWith("--allow-")))),
    {
      trim: false,
      other: "NotCapable",
    },
  );
  const trimmed = await trimUnder(await taskFlags("start:trim"));
  assert.equal(trimmed.trim, LIBC_PATHS.some(isFile));
  assert.equal(trimmed.other, "NotCapable", "FFI is granted for libc only");
});
