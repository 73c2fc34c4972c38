import assert from "node:assert/strict";
import { dataTempDir, freePort, MAIN, ROOT, startFlagsSync } from "./support/process.ts";

function run(args: string[], env: Record<string, string> = {}) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...startFlagsSync(), MAIN, ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  });
}

Deno.test("a bad config stops start-up with exit 1 and one line naming file and field", async () => {
  const dir = await dataTempDir();
  try {
    const path = `${dir}/bad.json`;
    await Deno.writeTextFile(
      path,
      JSON.stringify({
        providers: [{ id: "sim", style: "simulator" }],
        models: [
          { id: "a", provider: "sim", chat_completions: true },
          { id: "b", provider: "sim", chat_completions: true },
          { id: "c", provider: "sim", chat_completions: true },
          { id: "d", provider: "opnai", chat_completions: true },
        ],
      }),
    );
    const out = await run(["--config", path]).output();
    assert.equal(out.code, 1);
    const stderr = new TextDecoder().decode(out.stderr).trim();
    assert.equal(
      stderr,
      `switchyard: ${path}: models[3].provider: unknown provider "opnai" (known: "sim")`,
    );
    assert.equal(new TextDecoder().decode(out.stdout), "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("main.ts serves the repository's default config with no provider keys", async () => {
  const dir = await dataTempDir();
  const port = freePort();
  const child = run([], {
    PORT: String(port),
    SWITCHYARD_KV: `${dir}/kv.sqlite`,
  }).spawn();
  try {
    let models: { id: string }[] | undefined;
    for (let i = 0; i < 200 && !models; i++) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/v1/models`);
        models = (await res.json()).data;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    assert.ok(models, "the server did not answer");
    const ids = models.map((m) => m.id);
    for (const id of ["sim-chat", "sim-reasoning", "sim-tools", "sim-vision", "sim-moderation"]) {
      assert.ok(ids.includes(id), `${id} is listed`);
    }
    assert.ok(!ids.includes("gpt-4o-mini"), "openai models need OPENAI_API_KEY");
    assert.ok(!ids.includes("sim-image"), "the preview image model is not public");
  } finally {
    child.kill("SIGTERM");
    const out = await child.output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    assert.match(stderr, /provider \\"openai\\" disabled: OPENAI_API_KEY is not set/);
    assert.match(stderr, /provider \\"anthropic\\" disabled: ANTHROPIC_API_KEY is not set/);
    assert.match(stderr, /shutting down/);
    assert.doesNotMatch(stderr, /did you mean to run "deno serve"/);
    const stdout = new TextDecoder().decode(out.stdout).trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    assert.equal(stdout.at(-1).path, "/v1/models");
    await Deno.remove(dir, { recursive: true });
  }
});
