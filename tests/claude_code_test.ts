/**
 * The real Claude Code CLI (2.1.332, headless: `claude -p … --output-format json`) through a
 * gateway started the way users start it (the start task's own flags, `main.ts`, a config
 * file), on each back end: the simulator, and models behind the fake OpenAI-, Anthropic- and
 * Gemini-style upstreams. Each run must finish a turn with a tool round trip (Claude Code's
 * `Read` of a file in a temp workdir, allowed without asking), exit 0, and every request it
 * made must be 2xx in the gateway's request log; the fakes must have seen no request their
 * documented format forbids.
 */
import assert from "node:assert/strict";
import { ADMIN_TOKEN } from "./support/admin.ts";
import { runClaude } from "./support/claude_code.ts";
import { startFakeAnthropic } from "./support/fake_anthropic.ts";
import { startFakeGemini } from "./support/fake_gemini.ts";
import { type Conversation, defaultScript, type Reply } from "./support/fake_model.ts";
import { startFakeOpenAI } from "./support/fake_openai.ts";
import type { FakeUpstream } from "./support/fake_upstream.ts";
import { startGatewayProcess } from "./support/gateway_process.ts";
import { textPdf } from "./support/pdf.ts";

const SECRET = "pelican";
const CHAT = { chat_completions: true, function_calling: true, image_input: true };

/** The fakes' model for Claude Code: the tool the last user text names, called with the
 * `name=value` hints the text gives for its properties (a path Read can open); after tool
 * results, the default script's report of them. */
function hintScript(c: Conversation): Reply {
  const last = c.turns.at(-1);
  if (last === undefined || last.toolResults.length > 0) return defaultScript(c);
  const text = last.texts.join(" ");
  for (const tool of c.tools) {
    if (!new RegExp(`(?<![\\w-])${tool.name}(?![\\w-])`).test(text)) continue;
    const props = Object.keys((tool.parameters.properties ?? {}) as Record<string, unknown>);
    const args: Record<string, unknown> = {};
    for (const [, name, value] of text.matchAll(/(\w+)=(\S+)/g)) {
      if (props.includes(name!)) args[name!] = value;
    }
    if (Object.keys(args).length > 0) {
      return { text: "", toolCalls: [{ name: tool.name, arguments: args }] };
    }
  }
  return defaultScript(c);
}

/** A gateway process over the three fakes and the simulator, with an API key made through the
 * admin API. */
async function startGateway(fakes: { oa: FakeUpstream; an: FakeUpstream; ge: FakeUpstream }) {
  const gateway = await startGatewayProcess(fakes.oa, fakes.an, {
    env: { SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN, GE_KEY: fakes.ge.apiKey },
    providers: [
      { id: "sim", style: "simulator" },
      { id: "ge", style: "gemini", base_url: fakes.ge.url, api_key_env: "GE_KEY" },
    ],
    models: [
      { id: "cc-sim", provider: "sim", ...CHAT },
      { id: "cc-openai", provider: "oa", upstream_model: "gpt-up", ...CHAT },
      // A model with adaptive thinking and effort, which Claude Code asks for.
      { id: "cc-anthropic", provider: "an", upstream_model: "claude-sonnet-4-6", ...CHAT },
      { id: "cc-gemini", provider: "ge", upstream_model: "gemini-up", ...CHAT },
    ],
  });
  const made = await fetch(`${gateway.url}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "claude-code" }),
  });
  const { key } = await made.json();
  return { ...gateway, key: key as string };
}

/** The three fakes (scripted by hints), a gateway process over them with a key, and a work
 * directory; disposing of it stops and removes them all. */
async function startRun() {
  const fakes = { oa: startFakeOpenAI(), an: startFakeAnthropic(), ge: startFakeGemini() };
  for (const fake of Object.values(fakes)) fake.script = hintScript;
  const gateway = await startGateway(fakes);
  const work = await Deno.makeTempDir({ prefix: "claude-work-" });
  return {
    fakes,
    gateway,
    work,
    async [Symbol.asyncDispose]() {
      await gateway.stop();
      await Deno.remove(work, { recursive: true });
      for (const fake of Object.values(fakes)) await fake.close();
    },
  };
}

Deno.test({
  name: "claude-code: a headless turn with a Read round trip on every back end, all 2xx",
  // The fakes and the gateway process outlive single steps; each is closed at the end.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await using run = await startRun();
    const { fakes, gateway, work } = run;
    const file = `${work}/hello.txt`;
    await Deno.writeTextFile(file, `The secret word is ${SECRET}.\n`);
    const backEnds: [string, FakeUpstream | null][] = [
      ["cc-sim", null],
      ["cc-anthropic", fakes.an],
      ["cc-openai", fakes.oa],
      ["cc-gemini", fakes.ge],
    ];
    for (const [model, fake] of backEnds) {
      await t.step(model, async () => {
        const before = gateway.records.length;
        const seen = fake?.received.length ?? 0;
        const run = await runClaude({
          baseUrl: gateway.url,
          apiKey: gateway.key,
          model,
          // `pages=1`: the simulator fills optional properties, and Read refuses its sample.
          prompt: `Use Read with file_path=${file} pages=1 and tell me the secret word.`,
          cwd: work,
          allowedTools: ["Read"],
        });
        const shown = `stdout: ${run.stdout}\nstderr: ${run.stderr}`;
        assert.equal(run.code, 0, shown);
        assert.ok(run.result !== null, shown);
        assert.equal(run.result.is_error, false, shown);
        assert.equal(run.result.subtype, "success", shown);
        assert.ok((run.result.num_turns as number) >= 2, `no tool round trip: ${shown}`);
        assert.match(String(run.result.result), new RegExp(SECRET), shown);
        // The request log is flushed every 20 ms.
        await new Promise((r) => setTimeout(r, 200));
        const calls = gateway.records.slice(before).filter((r) =>
          String(r.path).startsWith("/v1/messages")
        );
        assert.ok(calls.length >= 2, `requests: ${JSON.stringify(calls)}`);
        for (const call of calls) {
          assert.ok((call.status as number) < 300, `not 2xx: ${JSON.stringify(call)}`);
          assert.equal(call.model, model);
        }
        if (fake) {
          const received = fake.received.slice(seen);
          assert.ok(received.length >= 2, "the upstream was called for each turn");
          for (const r of received) assert.deepEqual(r.violations, [], r.path);
        }
      });
    }
  },
});

Deno.test({
  name:
    "claude-code: a PDF its Read tool opens reaches OpenAI-style and Gemini back ends in their own form",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await using run = await startRun();
    const { fakes, gateway, work } = run;
    const file = `${work}/report.pdf`;
    const pdf = textPdf(`The secret word is ${SECRET}.`);
    await Deno.writeFile(file, pdf);
    const dataUrl = `data:application/pdf;base64,${pdf.toBase64()}`;
    const backEnds: [string, FakeUpstream, (body: string) => boolean][] = [
      ["cc-openai", fakes.oa, (body) => body.includes(`"file_data":"${dataUrl}"`)],
      [
        "cc-gemini",
        fakes.ge,
        (body) => body.includes(`"mimeType":"application/pdf","data":"${pdf.toBase64()}"`),
      ],
    ];
    for (const [model, fake, carries] of backEnds) {
      await t.step(model, async () => {
        const seen = fake.received.length;
        const run = await runClaude({
          baseUrl: gateway.url,
          apiKey: gateway.key,
          model,
          prompt: `Use Read with file_path=${file} and tell me the secret word.`,
          cwd: work,
          allowedTools: ["Read"],
        });
        const shown = `stdout: ${run.stdout}\nstderr: ${run.stderr}`;
        assert.equal(run.code, 0, shown);
        assert.equal(run.result?.is_error, false, shown);
        const received = fake.received.slice(seen);
        for (const r of received) assert.deepEqual(r.violations, [], r.path);
        assert.ok(
          received.some((r) => carries(r.text)),
          `no request carried the PDF: ${received.map((r) => r.text.slice(0, 300)).join("\n")}`,
        );
      });
    }
  },
});
