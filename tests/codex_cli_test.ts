/**
 * OpenAI's Codex CLI, unchanged, through the gateway (issue #34): `codex exec` headless, with a
 * custom `model_providers` entry (`wire_api = "responses"`) whose `base_url` is a gateway
 * started as `deno task start` starts it, completes a turn that runs a shell command (reading a
 * file in its workdir) and answers from its output, on the simulator, an OpenAI-style upstream
 * spoken to by chat completions, an Anthropic-style and a Gemini-style upstream. Codex sends a `namespace`
 * tool and the hosted `web_search` tool on every turn (left out by the gateway and named in
 * `x-switchyard-dropped-params`), `client_metadata`, `prompt_cache_key`, `store: false` and
 * `include: ["reasoning.encrypted_content"]`: every request it made is a 2xx in the log.
 */
import assert from "node:assert/strict";
import { ADMIN_TOKEN } from "./support/admin.ts";
import { runCodex } from "./support/codex_cli.ts";
import { startFakeAnthropic } from "./support/fake_anthropic.ts";
import { defaultScript, type Script } from "./support/fake_model.ts";
import { startFakeGemini } from "./support/fake_gemini.ts";
import { startFakeOpenAI } from "./support/fake_openai.ts";
import { startGatewayProcess } from "./support/gateway_process.ts";
import { dataTempDir } from "./support/process.ts";

const SECRET = "the secret word is zebra-42";

/** The fakes' model: Codex's shell tool on `notes.txt` first, then the tool's output. */
const codexScript: Script = (c) => {
  const last = c.turns.at(-1);
  if (!last?.toolResults.length && c.tools.some((t) => t.name === "exec_command")) {
    return { text: "", toolCalls: [{ name: "exec_command", arguments: { cmd: "cat notes.txt" } }] };
  }
  return defaultScript(c);
};

Deno.test("Codex CLI completes a tool-using turn through the gateway on every back end", async (t) => {
  const openai = startFakeOpenAI();
  const anthropic = startFakeAnthropic();
  const gemini = startFakeGemini();
  openai.script = codexScript;
  anthropic.script = codexScript;
  gemini.script = codexScript;
  const chat = { chat_completions: true, function_calling: true };
  const gateway = await startGatewayProcess(openai, anthropic, {
    env: { SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN, GE_KEY: gemini.apiKey },
    providers: [
      { id: "sim", style: "simulator" },
      { id: "ge", style: "gemini", base_url: gemini.url, api_key_env: "GE_KEY" },
    ],
    models: [
      { id: "sim-codex", provider: "sim", ...chat },
      { id: "ge-chat", provider: "ge", upstream_model: "gemini-up", ...chat },
    ],
  });
  const workdir = await dataTempDir("codex-work-");
  try {
    await Deno.writeTextFile(`${workdir}/notes.txt`, `${SECRET}\n`);
    const made = await fetch(`${gateway.url}/admin/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "codex" }),
    });
    assert.equal(made.status, 201);
    const { key, id: keyId } = await made.json();

    const targets = [
      {
        model: "sim-codex",
        // The simulator calls the tool the prompt names, with the values it gives.
        prompt: `Use exec_command with cmd="cat notes.txt" workdir=${workdir} shell=bash ` +
          "login=false tty=false yield_time_ms=2000 max_output_tokens=500",
      },
      { model: "oa-chat", prompt: "Read notes.txt and tell me the secret word." },
      { model: "an-chat", prompt: "Read notes.txt and tell me the secret word." },
      { model: "ge-chat", prompt: "Read notes.txt and tell me the secret word." },
    ];
    for (const { model, prompt } of targets) {
      await t.step(model, async () => {
        const before = gateway.records.length;
        const run = await runCodex({ gateway: gateway.url, apiKey: key, model, workdir, prompt });
        assert.equal(run.code, 0, `codex exited ${run.code}:\n${run.stdout}\n${run.stderr}`);
        // The command ran, and the model's last answer quotes its output.
        assert.match(run.stdout + run.stderr, /cat notes\.txt/);
        assert.ok(run.stdout.includes(SECRET), `no tool output in the answer:\n${run.stdout}`);
        // Its requests: at least the turn and the one after the tool's output, all 2xx.
        await gateway.record((r) => r.key_id === keyId && r.model === model);
        await new Promise((r) => setTimeout(r, 100));
        const mine = gateway.records.slice(before).filter((r) => r.key_id === keyId);
        assert.ok(mine.length >= 2, JSON.stringify(mine));
        for (const r of mine) {
          assert.ok(Number(r.status) >= 200 && Number(r.status) < 300, JSON.stringify(r));
          assert.equal(r.path, "/v1/responses");
          assert.equal(r.model, model);
        }
      });
    }
  } finally {
    await gateway.stop();
    await openai.close();
    await anthropic.close();
    await gemini.close();
    await Deno.remove(workdir, { recursive: true });
  }
});
