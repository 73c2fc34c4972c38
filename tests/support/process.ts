/**
 * Switchyard as real processes, started the ways an operator starts it: `deno run main.ts`
 * (what `deno task start` and the compiled binary run), `deno serve main.ts` and
 * `deno serve --parallel main.ts`. stderr is collected as it comes, so a test can wait for the
 * start banner or a shutdown notice and then send signals.
 */

/** The repository root. */
export const ROOT = new URL("../../", import.meta.url).pathname;
/** main.ts. */
export const MAIN = `${ROOT}main.ts`;

/** How to start it. */
export type Entry = "run" | "serve" | "serve-parallel";

/** Options for {@link spawnSwitchyard}. */
export interface SpawnOptions {
  entry?: Entry;
  /** Arguments after main.ts (deno run) or before it (deno serve's own flags). */
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** The whole command line after `deno` (instead of one made from `entry` and `args`). */
  command?: string[];
}

/** A running Switchyard process. */
export class SwitchyardProcess {
  readonly child: Deno.ChildProcess;
  #stderr = "";
  #stdout = "";
  readonly #done: Promise<Deno.CommandStatus>;
  readonly #drained: Promise<void>;

  constructor(options: SpawnOptions = {}) {
    const entry = options.entry ?? "run";
    const flags = startFlagsSync();
    const args = options.command ??
      (entry === "run" ? ["run", ...flags, MAIN, ...options.args ?? []] : [
        "serve",
        ...flags,
        ...(entry === "serve-parallel" ? ["--parallel"] : []),
        ...options.args ?? [],
        MAIN,
      ]);
    this.child = new Deno.Command(Deno.execPath(), {
      args,
      cwd: options.cwd ?? ROOT,
      // Under deno serve, main.ts cannot read its command line with the start task's flags
      // (/proc needs --allow-all), so deno serve is named by the environment (README, Scaling).
      env: {
        NO_COLOR: "1",
        DENO_JOBS: "2",
        ...(entry === "run" ? {} : { SWITCHYARD_DENO_SERVE: "1" }),
        ...options.env,
      },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#drained = Promise.all([
      collect(this.child.stderr, (text) => (this.#stderr += text)),
      collect(this.child.stdout, (text) => (this.#stdout += text)),
    ]).then(() => {});
    this.#done = this.child.status;
  }

  get stderr(): string {
    return this.#stderr;
  }

  get stdout(): string {
    return this.#stdout;
  }

  /** Resolves with the match once stderr has a line matching `pattern`; rejects if the
   * process ends first. */
  async waitFor(pattern: RegExp): Promise<RegExpMatchArray> {
    let ended = false;
    this.#done.then(() => (ended = true));
    for (;;) {
      const match = this.#stderr.match(pattern);
      if (match) return match;
      if (ended) {
        await this.#drained;
        const late = this.#stderr.match(pattern);
        if (late) return late;
        throw new Error(`the process ended before ${pattern}; stderr:\n${this.#stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** The base URL from the start banner (`listening on http://…:PORT`). */
  async url(): Promise<string> {
    const [, host, port] = await this.waitFor(/listening on http:\/\/([^\s;]+):(\d+)/);
    return `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`;
  }

  /** The exit status, with all output read. */
  async status(): Promise<Deno.CommandStatus> {
    const status = await this.#done;
    await this.#drained;
    return status;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    try {
      this.child.kill("SIGKILL");
    } catch {
      // already ended
    }
    await this.status();
  }
}

/** Starts Switchyard (see {@link SpawnOptions}). */
export function spawnSwitchyard(options: SpawnOptions = {}): SwitchyardProcess {
  return new SwitchyardProcess(options);
}

async function collect(stream: ReadableStream<Uint8Array>, add: (text: string) => void) {
  const decoder = new TextDecoder();
  for await (const chunk of stream) add(decoder.decode(chunk, { stream: true }));
}

/** Runs a probe of `tests/support/` in a process of its own with `--expose-gc` (it collects
 * garbage when it wants to measure what stays) and returns the JSON of its last stdout line;
 * throws with its stderr if it fails. */
export async function runGcProbe<T>(script: string, args: string[] = []): Promise<T> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--v8-flags=--expose-gc",
      "--allow-all",
      `${ROOT}tests/support/${script}`,
      ...args,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (code !== 0) throw new Error(`${script} failed: ${new TextDecoder().decode(stderr)}`);
  return JSON.parse(new TextDecoder().decode(stdout).trim().split("\n").at(-1)!);
}

/** The flags of `deno task start` (permissions and V8's), between `deno run` and `main.ts`:
 * every test that starts Switchyard as a process starts it with exactly these, from the
 * repository root (the read and write grants are relative to it). */
export function startFlagsSync(): string[] {
  const meta = JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`));
  const words: string[] = meta.tasks.start.split(" ");
  return words.slice(2, words.indexOf("main.ts"));
}

/** {@link startFlagsSync}, for callers that await. */
export function startFlags(): Promise<string[]> {
  return Promise.resolve(startFlagsSync());
}

/** A new directory under `data/tests/` of the repository, where the start task lets the
 * process read and write: for a spawned gateway's config and KV files. */
export async function dataTempDir(prefix?: string): Promise<string> {
  await Deno.mkdir(`${ROOT}data/tests`, { recursive: true });
  return await Deno.makeTempDir({ dir: `${ROOT}data/tests`, ...(prefix ? { prefix } : {}) });
}

/** Runs `script` (TypeScript, from stdin) with `deno run` and `flags`; returns its stdout, or
 * throws with its stderr if it fails. */
export async function runScript(flags: string[], script: string): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, "-"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(script));
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  if (code !== 0) throw new Error(`the script failed: ${new TextDecoder().decode(stderr)}`);
  return new TextDecoder().decode(stdout);
}

/** A port that was free a moment ago. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** A temporary directory with a config file written from `config`; removed on dispose. */
export async function tempConfig(
  config: Record<string, unknown>,
): Promise<{ dir: string; path: string; kv: string } & AsyncDisposable> {
  const dir = await dataTempDir();
  const path = `${dir}/switchyard.json`;
  await Deno.writeTextFile(path, JSON.stringify(config, null, 2));
  return {
    dir,
    path,
    kv: `${dir}/kv.sqlite`,
    async [Symbol.asyncDispose]() {
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** A simulator-only config document; `token_delay_ms` paces its streams. */
export function simConfig(options: {
  port?: number;
  kvPath?: string;
  grace?: number;
  tokenDelayMs?: number;
  models?: Record<string, unknown>[];
} = {}): Record<string, unknown> {
  return {
    server: {
      hostname: "127.0.0.1",
      port: options.port ?? 0,
      shutdown_grace_seconds: options.grace ?? 30,
    },
    kv: { path: options.kvPath ?? ":memory:" },
    providers: [{ id: "sim", style: "simulator", token_delay_ms: options.tokenDelayMs ?? 0 }],
    models: options.models ?? [
      { id: "sim-chat", provider: "sim", chat_completions: true },
      { id: "sim-vision", provider: "sim", chat_completions: true, image_input: true },
      { id: "sim-tools", provider: "sim", chat_completions: true, function_calling: true },
      { id: "sim-moderation", provider: "sim", moderation: true },
    ],
    limits: { anonymous: { chat: { per_minute: 10_000, per_day: 1_000_000 } } },
  };
}

/** Starts a streamed chat on `url`; resolves once its first chunk came, with the rest. */
export async function startStream(
  url: string,
  maxTokens: number,
): Promise<{ rest: Promise<string> }> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "sim-chat",
      stream: true,
      max_tokens: maxTokens,
      messages: [{ role: "user", content: "Tell me a long story about a railway switchyard." }],
    }),
  });
  if (res.status !== 200) throw new Error(`stream: ${res.status} ${await res.text()}`);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const first = await reader.read();
  const rest = (async () => {
    let text = first.value ?? "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text;
        text += value;
      }
    } catch (e) {
      return `${text}\n[cut: ${e instanceof Error ? e.message : e}]`;
    }
  })();
  return { rest };
}

/** Whether `text` has terminal colour codes or a stack trace (start-up errors must not). */
export function hasColourOrStack(text: string): boolean {
  return text.includes("\u001b") || /\n\s+at /.test(text);
}
