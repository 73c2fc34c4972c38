/** `deno task backup`, run as a real process next to a process that keeps writing. */
import assert from "node:assert/strict";
import { ROOT } from "../support/process.ts";

async function backup(env: Record<string, string>, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "backup", ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

Deno.test("deno task backup snapshots a KV file that another process is writing, consistently", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/live.kv`;
  const writer = `${dir}/writer.ts`;
  // Each commit writes a pair of entries that must agree: a snapshot shows both or neither.
  await Deno.writeTextFile(
    writer,
    `const kv = await Deno.openKv(Deno.args[0]);
for (let i = 0; ; i++) {
  await kv.atomic().set(["pair", "a"], i).set(["pair", "b"], i).set(["n", i], i).commit();
  if (i === 20) console.log("ready");
}
`,
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", writer, path],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    await lines.read(); // "ready"
    for (const n of [1, 2, 3]) {
      const out = `${dir}/backups/b${n}.kv`;
      const run = await backup({ SWITCHYARD_KV: path }, "--out", out);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, `${out}\n`);
      assert.match(
        run.stderr,
        new RegExp(`^Backed up \\d+ KV entries from ${path} to ${out}\\.\\n$`),
      );
      const kv = await Deno.openKv(out);
      const a = (await kv.get<number>(["pair", "a"])).value!;
      const b = (await kv.get<number>(["pair", "b"])).value!;
      let count = 0;
      for await (const _ of kv.list({ prefix: ["n"] })) count++;
      kv.close();
      assert.equal(a, b, "both halves of a commit, or neither");
      assert.equal(count, a + 1, "every earlier commit, none later");
    }
    const again = await backup({ SWITCHYARD_KV: path }, "--out", `${dir}/backups/b1.kv`);
    assert.equal(again.code, 1);
    assert.equal(
      again.stderr,
      `backup: ${dir}/backups/b1.kv exists already; choose another --out\n`,
    );
    const memory = await backup({ SWITCHYARD_KV: ":memory:" });
    assert.equal(memory.code, 1);
    assert.match(
      memory.stderr,
      /^backup: kv.path is ":memory:": deno task backup copies a local KV file/,
    );
    const flag = await backup({ SWITCHYARD_KV: path }, "--output", "x");
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /^backup: unknown option --output\n/);
  } finally {
    child.kill("SIGKILL");
    await lines.cancel();
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
});
