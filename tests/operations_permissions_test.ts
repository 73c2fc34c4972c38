/**
 * Least privilege (issue #33): the start task and its siblings grant no `--allow-all`, no FFI,
 * no subprocesses, and read and write only named paths; a config or KV file outside them stops
 * the start with one line that says what to do. (Docker's and systemd's flags are checked
 * against the start task's in operations_deploy_test.ts; the disconnect safeguard under these
 * flags in disconnects_process_test.ts.)
 */
import assert from "node:assert/strict";
import { READ_GRANTS, WRITE_GRANTS } from "../src/serve/grants.ts";
import { dataTempDir, hasColourOrStack, MAIN, ROOT, startFlagsSync } from "./support/process.ts";

const tasks: Record<string, string> = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks;

/** The permission flags of a task's command. */
function permissions(task: string): string[] {
  return tasks[task]!.split(" ").filter((word) => /^(-A|--allow-)/.test(word));
}

const LIBC = "--allow-ffi=/lib/x86_64-linux-gnu/libc.so.6,/lib/aarch64-linux-gnu/libc.so.6";

Deno.test("start, dev, compile and start:trim grant no --allow-all, run or sys, and read and write only named paths", () => {
  for (const task of ["start", "dev", "compile", "start:trim"]) {
    const flags = permissions(task);
    for (const flag of flags) {
      assert.ok(
        !/^(-A|--allow-all|--allow-run|--allow-sys|--allow-import|--allow-scripts)/.test(flag),
        `${task} grants ${flag}`,
      );
    }
    assert.deepEqual(
      flags.filter((f) => f.startsWith("--allow-read") || f.startsWith("--allow-write")),
      ["--allow-read=switchyard.json,data,src", "--allow-write=data"],
      `${task}: reads the config, the data directory and the code; writes the data directory`,
    );
    assert.deepEqual(
      flags.filter((f) => f.startsWith("--allow-ffi")),
      task === "start:trim" ? [LIBC] : [],
      `${task}: FFI only in start:trim, and only to glibc`,
    );
    assert.ok(flags.includes("--allow-net") && flags.includes("--allow-env"), task);
  }
  // The start:trim task is the start task plus FFI, nothing else.
  assert.equal(tasks["start:trim"], tasks.start!.replace(" main.ts", ` ${LIBC} main.ts`));
  // What the error messages say is what the task grants.
  assert.deepEqual(READ_GRANTS, ["switchyard.json", "data/", "src/"]);
  assert.deepEqual(WRITE_GRANTS, ["data/"]);
});

/** Starts main.ts with the start task's flags and `args`; it must fail at start. */
async function failsToStart(args: string[], env: Record<string, string> = {}): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...startFlagsSync(), MAIN, ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", PORT: "0", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 1, stderr);
  assert.ok(!hasColourOrStack(stderr), stderr);
  assert.equal(stderr.trim().split("\n").length, 1, stderr);
  return stderr.trim();
}

Deno.test("a config file outside the grants stops the start with one line naming it and the fix", async () => {
  const outside = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.copyFile(`${ROOT}switchyard.json`, outside);
    const line = await failsToStart(["--config", outside]);
    assert.equal(
      line,
      `switchyard: ${outside}: cannot read config: ${outside} is outside what deno task start ` +
        `lets Switchyard read (switchyard.json, data/, src/; README, Security: Permissions): ` +
        `put it under data/, or add --allow-read=${outside} to the deno command`,
    );
  } finally {
    await Deno.remove(outside);
  }
});

Deno.test("a KV file outside the grants stops the start with one line naming it and the fix", async () => {
  const outside = await Deno.makeTempDir();
  const inside = await dataTempDir();
  try {
    await Deno.copyFile(`${ROOT}switchyard.json`, `${inside}/switchyard.json`);
    const line = await failsToStart(["--config", `${inside}/switchyard.json`], {
      SWITCHYARD_KV: `${outside}/kv.sqlite`,
    });
    assert.match(line, /^switchyard: cannot start: cannot open the KV store \(kv\.path\): /);
    assert.ok(line.includes(`${outside}/kv.sqlite is outside what deno task start lets`), line);
    assert.ok(
      line.endsWith(
        `add --allow-read=${outside}/kv.sqlite --allow-write=${outside}/kv.sqlite to the deno command`,
      ),
      line,
    );
  } finally {
    await Deno.remove(outside, { recursive: true });
    await Deno.remove(inside, { recursive: true });
  }
});
