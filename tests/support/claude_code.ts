/**
 * The real Claude Code CLI for end-to-end tests: `@anthropic-ai/claude-code` 2.1.332, pinned by
 * `tests/support/claude_code/package-lock.json` (with its integrity hashes) and installed once
 * with `npm ci` into `data/tests/claude-code/`. The package's `claude` is a native binary (its
 * platform's optional dependency, copied over `bin/claude.exe` by its postinstall), not a Node
 * script, so `deno run npm:@anthropic-ai/claude-code` cannot run it: the tests run the binary.
 */
import { ROOT } from "./process.ts";

/** The pinned version. */
export const CLAUDE_CODE_VERSION = "2.1.332";

const SOURCE = `${ROOT}tests/support/claude_code`;
const PREFIX = `${ROOT}data/tests/claude-code`;
const PACKAGES = `${PREFIX}/node_modules/@anthropic-ai`;

let installing: Promise<string> | null = null;

/** The path of the `claude` binary, installed first when it is not there (needs `npm` and the
 * npm registry). */
export function claudeCodeBinary(): Promise<string> {
  installing ??= install();
  return installing;
}

async function install(): Promise<string> {
  const found = await findBinary();
  if (found !== null) return found;
  await Deno.mkdir(PREFIX, { recursive: true });
  for (const file of ["package.json", "package-lock.json"]) {
    await Deno.copyFile(`${SOURCE}/${file}`, `${PREFIX}/${file}`);
  }
  const { code, stderr } = await new Deno.Command("npm", {
    args: ["ci", "--prefix", PREFIX, "--no-audit", "--no-fund", "--loglevel=error"],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (code !== 0) {
    throw new Error(`npm ci of Claude Code failed: ${new TextDecoder().decode(stderr)}`);
  }
  const binary = await findBinary();
  if (binary === null) throw new Error(`no runnable claude binary under ${PACKAGES}`);
  return binary;
}

/** The first candidate that answers `--version` with the pinned version: the wrapper's
 * `bin/claude.exe` (once its postinstall copied the binary over it), else the binary of the
 * platform's own package. */
async function findBinary(): Promise<string | null> {
  const candidates = [`${PACKAGES}/claude-code/bin/claude.exe`];
  try {
    for await (const entry of Deno.readDir(PACKAGES)) {
      if (entry.name.startsWith("claude-code-")) {
        candidates.push(`${PACKAGES}/${entry.name}/claude`);
      }
    }
  } catch {
    return null;
  }
  for (const path of candidates) {
    try {
      const { code, stdout } = await new Deno.Command(path, {
        args: ["--version"],
        stdout: "piped",
        stderr: "null",
        env: { HOME: PREFIX },
      }).output();
      const version = new TextDecoder().decode(stdout);
      if (code === 0 && version.startsWith(CLAUDE_CODE_VERSION)) return path;
    } catch {
      // Not this one (a stub, another platform's binary).
    }
  }
  return null;
}

/** What one headless run gave. */
export interface ClaudeRun {
  code: number;
  /** The `--output-format json` result (null when stdout was not JSON). */
  result: Record<string, unknown> | null;
  stdout: string;
  stderr: string;
}

/** Options for {@link runClaude}. */
export interface ClaudeRunOptions {
  /** The gateway's root URL (`ANTHROPIC_BASE_URL`). */
  baseUrl: string;
  /** A gateway key (`ANTHROPIC_API_KEY`). */
  apiKey: string;
  /** The gateway's model id (`--model`). */
  model: string;
  prompt: string;
  /** The working directory (a temp dir of the test's). */
  cwd: string;
  /** Tools that run without asking (`--allowedTools`). */
  allowedTools: string[];
  /** Give up after this long (default 120 s). */
  timeoutMs?: number;
}

/** Runs `claude -p PROMPT --output-format json` headless, as a user would against the gateway:
 * a fresh HOME, no telemetry or other traffic than the model calls. */
export async function runClaude(options: ClaudeRunOptions): Promise<ClaudeRun> {
  const binary = await claudeCodeBinary();
  const home = await Deno.makeTempDir({ prefix: "claude-home-" });
  try {
    const { code, stdout, stderr } = await new Deno.Command(binary, {
      args: [
        "-p",
        options.prompt,
        "--output-format",
        "json",
        "--model",
        options.model,
        "--allowedTools",
        options.allowedTools.join(","),
      ],
      cwd: options.cwd,
      clearEnv: true,
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: home,
        ANTHROPIC_BASE_URL: options.baseUrl,
        ANTHROPIC_API_KEY: options.apiKey,
        DISABLE_TELEMETRY: "1",
        DISABLE_ERROR_REPORTING: "1",
        DISABLE_AUTOUPDATER: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        NO_COLOR: "1",
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(options.timeoutMs ?? 120_000),
    }).output();
    const out = new TextDecoder().decode(stdout);
    let result: Record<string, unknown> | null = null;
    try {
      result = JSON.parse(out);
    } catch {
      // Left null: the assertion shows stdout and stderr.
    }
    return { code, result, stdout: out, stderr: new TextDecoder().decode(stderr) };
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}
