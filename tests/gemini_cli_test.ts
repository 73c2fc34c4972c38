/**
 * The real Gemini CLI (`@google/gemini-cli`, headless: `-p`, `--yolo`) against Switchyard
 * started the way users start it (`deno task start`'s flags, a config file), in a temporary
 * HOME and work directory, with `GOOGLE_GEMINI_BASE_URL` on the gateway and `GEMINI_API_KEY`
 * a gateway key: it must complete a turn that needs a tool round trip (it reads a file of the
 * work directory through its `read_file` tool and answers with what the file holds), exit 0,
 * and every request it made must be a 2xx in the gateway's request log. Run on the simulator
 * and on models behind the fake OpenAI-style, Anthropic-style and Gemini-style upstreams; and a
 * PDF read the same way must reach the OpenAI- and Anthropic-style upstreams in their own form.
 *
 * Headless setup: `--yolo` approves the tool call; the user settings turn usage statistics,
 * telemetry and update checks off and select the API-key auth (no login prompt);
 * `GEMINI_CLI_TRUST_WORKSPACE` trusts the work directory; the environment is cleared, so that
 * nothing of the machine's own Gemini setup leaks in.
 */
import assert from "node:assert/strict";
import { startFakeAnthropic } from "./support/fake_anthropic.ts";
import { startFakeGemini } from "./support/fake_gemini.ts";
import { startFakeOpenAI } from "./support/fake_openai.ts";
import type { Script } from "./support/fake_model.ts";
import type { FakeUpstream } from "./support/fake_upstream.ts";
import { ADMIN_TOKEN } from "./support/admin.ts";
import { textPdf } from "./support/pdf.ts";
import { ROOT, spawnSwitchyard, tempConfig } from "./support/process.ts";

/** The CLI as a user installs it, pinned. */
const GEMINI_CLI = "npm:@google/gemini-cli@0.61.0";
/** How long one CLI run may take before the test fails. */
const RUN_TIMEOUT_MS = 120_000;
const SECRET = "tangerine-4417";
const CHAT = { chat_completions: true, function_calling: true, image_input: true };

/** A back end the CLI's model is served by. */
interface Backend {
  name: string;
  /** The model the CLI asks for. */
  model: string;
  /** Starts the fake behind it (none for the simulator). */
  fake?: () => FakeUpstream;
  /** The provider entry for the fake at `url`. */
  provider?: (url: string) => Record<string, unknown>;
}

const BACKENDS: Backend[] = [
  { name: "simulator", model: "sim-tools" },
  {
    name: "openai",
    model: "oa-tools",
    fake: () => startFakeOpenAI(),
    provider: (url) => ({
      id: "oa",
      style: "openai",
      base_url: `${url}/v1`,
      api_key_env: "UP_KEY",
    }),
  },
  {
    name: "anthropic",
    model: "an-tools",
    fake: () => startFakeAnthropic(),
    provider: (url) => ({ id: "an", style: "anthropic", base_url: url, api_key_env: "UP_KEY" }),
  },
  {
    name: "gemini",
    model: "ge-tools",
    fake: () => startFakeGemini(),
    provider: (url) => ({ id: "ge", style: "gemini", base_url: url, api_key_env: "UP_KEY" }),
  },
];

for (const backend of BACKENDS) {
  Deno.test({
    name:
      `gemini-cli/${backend.name}: a headless turn reads a file with read_file and answers from it`,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      await using fake = backend.fake ? disposable(backend.fake()) : null;
      const providers: Record<string, unknown>[] = [{ id: "sim", style: "simulator" }];
      const models: Record<string, unknown>[] = [{ id: "sim-tools", provider: "sim", ...CHAT }];
      if (fake && backend.provider) {
        const entry = backend.provider(fake.value.url);
        providers.push({ ...entry, max_retries: 0 });
        models.push({ id: backend.model, provider: entry.id, upstream_model: "up-model", ...CHAT });
      }
      await using config = await tempConfig({
        // Port 0: the gateway picks one and says which (gateway.url()).
        server: { hostname: "127.0.0.1", port: 0, shutdown_grace_seconds: 0 },
        kv: { path: ":memory:" },
        providers,
        models,
      });
      await using gateway = spawnSwitchyard({
        args: ["--config", config.path],
        env: { SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN, UP_KEY: fake?.value.apiKey ?? "" },
      });
      const url = await gateway.url();
      const key = await createKey(url);
      const home = await Deno.makeTempDir({ prefix: "gemini-home-" });
      const work = await Deno.makeTempDir({ prefix: "gemini-work-" });
      try {
        await Deno.writeTextFile(`${work}/notes.txt`, `The secret word is ${SECRET}.\n`);
        await writeSettings(home);
        if (fake) fake.value.script = readThenAnswer(`${work}/notes.txt`);
        const prompt =
          `Use read_file with file_path=${work}/notes.txt and tell me the secret word it holds.`;
        const run = await runCli(backend.model, prompt, { home, work, url, key });
        assert.equal(run.code, 0, `the CLI failed:\n${run.stderr}\n${run.stdout}`);
        const records = requestRecords(gateway.stdout);
        const calls = records.filter((r) => /\/models\//.test(r.path));
        assert.ok(
          calls.length >= 2,
          `a tool round trip takes two calls: ${JSON.stringify(records)}`,
        );
        for (const r of records) assert.ok(r.status < 300, `${r.method} ${r.path}: ${r.status}`);
        assert.match(run.stdout, new RegExp(SECRET));
        if (fake) assert.deepEqual(fake.value.violations, []);
      } finally {
        await Deno.remove(home, { recursive: true });
        await Deno.remove(work, { recursive: true });
      }
    },
  });
}

for (const backend of BACKENDS.filter((b) => b.name === "openai" || b.name === "anthropic")) {
  Deno.test({
    name: `gemini-cli/${backend.name}: a PDF read_file opens reaches the back end in its own form`,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      await using fake = disposable(backend.fake!());
      const entry = backend.provider!(fake.value.url);
      await using config = await tempConfig({
        server: { hostname: "127.0.0.1", port: 0, shutdown_grace_seconds: 0 },
        kv: { path: ":memory:" },
        providers: [{ ...entry, max_retries: 0 }],
        models: [{ id: backend.model, provider: entry.id, upstream_model: "up-model", ...CHAT }],
      });
      await using gateway = spawnSwitchyard({
        args: ["--config", config.path],
        env: { SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN, UP_KEY: fake.value.apiKey },
      });
      const url = await gateway.url();
      const key = await createKey(url);
      const home = await Deno.makeTempDir({ prefix: "gemini-home-" });
      const work = await Deno.makeTempDir({ prefix: "gemini-work-" });
      try {
        const pdf = textPdf(`The secret word is ${SECRET}.`);
        await Deno.writeFile(`${work}/report.pdf`, pdf);
        await writeSettings(home);
        fake.value.script = readThenAnswer(`${work}/report.pdf`);
        const prompt = `Use read_file with file_path=${work}/report.pdf and tell me what it says.`;
        const run = await runCli(backend.model, prompt, { home, work, url, key });
        assert.equal(run.code, 0, `the CLI failed:\n${run.stderr}\n${run.stdout}`);
        for (const r of requestRecords(gateway.stdout)) {
          assert.ok(r.status < 300, `${r.method} ${r.path}: ${r.status}`);
        }
        const base64 = pdf.toBase64();
        const carried = fake.value.received.some((r) =>
          r.text.includes(`"file_data":"data:application/pdf;base64,${base64}"`) ||
          r.text.includes(`"media_type":"application/pdf","data":"${base64}"`)
        );
        assert.ok(
          carried,
          `no request carried the PDF: ${fake.value.received.map((r) => r.text.slice(-600))}`,
        );
        assert.deepEqual(fake.value.violations, []);
      } finally {
        await Deno.remove(home, { recursive: true });
        await Deno.remove(work, { recursive: true });
      }
    },
  });
}

/** What a fake's model does: call `read_file` on `path`, then answer with what it returned. */
function readThenAnswer(path: string): Script {
  return (conversation) => {
    const results = conversation.turns.at(-1)?.toolResults ?? [];
    if (results.length > 0) {
      return { text: `The file says: ${results.map((r) => r.text).join(" ")}`, toolCalls: [] };
    }
    return { text: "", toolCalls: [{ name: "read_file", arguments: { file_path: path } }] };
  };
}

/** A fake that closes on dispose. */
function disposable(fake: FakeUpstream) {
  return { value: fake, [Symbol.asyncDispose]: () => fake.close() };
}

/** A gateway key, made through the admin API. */
async function createKey(url: string): Promise<string> {
  const res = await fetch(`${url}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "gemini-cli" }),
  });
  const body = await res.json();
  assert.equal(res.status, 201, JSON.stringify(body));
  return body.key;
}

/** The CLI's user settings: no telemetry or usage statistics, no update checks, the gateway's
 * key as its auth. */
async function writeSettings(home: string): Promise<void> {
  await Deno.mkdir(`${home}/.gemini`, { recursive: true });
  const settings = {
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
  };
  await Deno.writeTextFile(`${home}/.gemini/settings.json`, JSON.stringify(settings, null, 2));
}

/** Runs the CLI headless in `work`. */
async function runCli(
  model: string,
  prompt: string,
  where: { home: string; work: string; url: string; key: string },
): Promise<{ code: number; stdout: string; stderr: string }> {
  // The CLI's packages as deno.lock records them, from a copy: a run never writes the lock.
  const lock = `${where.home}/deno.lock`;
  await Deno.copyFile(`${ROOT}deno.lock`, lock);
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `--lock=${lock}`,
      "--frozen",
      GEMINI_CLI,
      ...["-p", prompt, "-m", model, "--yolo", "--output-format", "text"],
    ],
    cwd: where.work,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: where.home,
      DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
      GOOGLE_GEMINI_BASE_URL: where.url,
      GEMINI_API_KEY: where.key,
      GEMINI_TELEMETRY_ENABLED: "false",
      GEMINI_CLI_NO_RELAUNCH: "true",
      GEMINI_CLI_TRUST_WORKSPACE: "true",
      NO_COLOR: "1",
      CI: "1",
    },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(RUN_TIMEOUT_MS),
  });
  const { code, stdout, stderr } = await child.output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code, stdout: decode(stdout), stderr: decode(stderr) };
}

/** The request records in the gateway's stdout (one JSON line per request). */
function requestRecords(stdout: string): { method: string; path: string; status: number }[] {
  return stdout.split("\n").flatMap((line) => {
    if (!line.startsWith("{")) return [];
    const record = JSON.parse(line);
    return typeof record.status === "number" && typeof record.path === "string"
      ? [{ method: record.method, path: record.path, status: record.status }]
      : [];
  }).filter((r) => !r.path.startsWith("/admin/"));
}
