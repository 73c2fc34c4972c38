/**
 * OpenAI's Codex CLI for the end-to-end tests that drive it: `@openai/codex` at a pinned
 * version, installed with npm into `data/tests/npm/codex-<version>/` on first use (the CLI is
 * a native binary shipped in a platform package among npm's optional dependencies, which
 * Deno's npm resolution does not run), and a headless `codex exec` in a temporary `CODEX_HOME`
 * whose config.toml points a custom `model_providers` entry (`wire_api = "responses"`) at the
 * gateway.
 */
import { dataTempDir, ROOT } from "./process.ts";

/** The Codex CLI release the tests drive. */
export const CODEX_VERSION = "0.171.0";

const DIR = `${ROOT}data/tests/npm/codex-${CODEX_VERSION}`;
const BIN = `${DIR}/node_modules/.bin/codex`;

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** The `codex` launcher, installed first when missing (into a temporary folder renamed into
 * place, so that concurrent test processes never see half an install). */
export async function codexBinary(): Promise<string> {
  if (await exists(BIN)) return BIN;
  const staging = await dataTempDir("codex-install-");
  await Deno.writeTextFile(
    `${staging}/package.json`,
    JSON.stringify({ private: true, dependencies: { "@openai/codex": CODEX_VERSION } }),
  );
  const npm = await new Deno.Command("npm", {
    args: ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--prefix", staging],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!npm.success) {
    await Deno.remove(staging, { recursive: true });
    throw new Error(
      `npm install @openai/codex@${CODEX_VERSION} failed: ${new TextDecoder().decode(npm.stderr)}`,
    );
  }
  await Deno.mkdir(`${ROOT}data/tests/npm`, { recursive: true });
  try {
    await Deno.rename(staging, DIR);
  } catch (e) {
    await Deno.remove(staging, { recursive: true });
    if (!(await exists(BIN))) throw e;
  }
  return BIN;
}

/** One `codex exec` run's outcome. */
export interface CodexRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options for {@link runCodex}. */
export interface CodexOptions {
  /** The gateway's base URL (`http://host:port`). */
  gateway: string;
  /** A gateway API key (given to Codex through the provider's `env_key`). */
  apiKey: string;
  /** The gateway's model id. */
  model: string;
  /** The folder Codex works in. */
  workdir: string;
  prompt: string;
}

/** The config.toml of a Codex home that sends every request to the gateway, runs commands
 * without asking, and sends nothing elsewhere (no update check, no analytics). */
export function codexConfig(gateway: string, model: string): string {
  return [
    `model = ${JSON.stringify(model)}`,
    `model_provider = "switchyard"`,
    `approval_policy = "never"`,
    `sandbox_mode = "danger-full-access"`,
    `check_for_update_on_startup = false`,
    ``,
    `[model_providers.switchyard]`,
    `name = "Switchyard"`,
    `base_url = ${JSON.stringify(`${gateway}/v1`)}`,
    `env_key = "SWITCHYARD_API_KEY"`,
    `wire_api = "responses"`,
    ``,
    `[analytics]`,
    `enabled = false`,
    ``,
  ].join("\n");
}

/** Runs `codex exec <prompt>` headless in a fresh home (removed afterwards); at most two
 * minutes. */
export async function runCodex(options: CodexOptions): Promise<CodexRun> {
  const bin = await codexBinary();
  const home = await dataTempDir("codex-home-");
  try {
    await Deno.writeTextFile(`${home}/config.toml`, codexConfig(options.gateway, options.model));
    const child = new Deno.Command(bin, {
      args: ["exec", "--skip-git-repo-check", "-C", options.workdir, options.prompt],
      cwd: options.workdir,
      clearEnv: true,
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: home,
        CODEX_HOME: home,
        SWITCHYARD_API_KEY: options.apiKey,
        NO_COLOR: "1",
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(120_000),
    }).spawn();
    const out = await child.output();
    const decoder = new TextDecoder();
    return {
      code: out.code,
      stdout: decoder.decode(out.stdout),
      stderr: decoder.decode(out.stderr),
    };
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}
