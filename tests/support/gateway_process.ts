/**
 * A gateway as a real `main.ts` process over the fake OpenAI and Anthropic upstreams (models
 * `oa-chat` and `an-chat`), its stdout read line by line as request records.
 */
import type { FakeUpstream } from "./fake_upstream.ts";
import { FAKE_CHAT_MODELS, fakeProviders } from "./gateway.ts";
import { dataTempDir, MAIN, ROOT, startFlagsSync } from "./process.ts";

/** Options for {@link startGatewayProcess}. */
export interface GatewayProcessOptions {
  /** More environment variables (OTEL_*, …). */
  env?: Record<string, string>;
  /** Settings for both upstream providers (max_retries, …). */
  provider?: Record<string, unknown>;
  /** More providers (the simulator, …) and models beside the two fakes'. */
  providers?: Record<string, unknown>[];
  models?: Record<string, unknown>[];
  /** More top-level config sections (`limits`, `batches`…). */
  config?: Record<string, unknown>;
  /** A data directory to use (its KV kept): a gateway started again on the same KV. The caller
   * removes it; without it, a new one is made and removed at stop. */
  dir?: string;
}

/** A running gateway process. */
export interface GatewayProcess {
  url: string;
  /** The request records written to stdout so far. */
  records: Record<string, unknown>[];
  /** Waits for a record `match` accepts (the process flushes its log every 20 ms). */
  record(match: (r: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  /** SIGTERM (or `signal`: `SIGKILL` for a crash); resolves with the exit code and stderr once
   * stdout has ended. */
  stop(signal?: Deno.Signal): Promise<{ code: number; stderr: string }>;
}

/** How long a stopped gateway may take to exit before it is killed. */
const STOP_MS = 20_000;

/** Starts `main.ts` with a config over the two fakes (shutdown grace 1 s) and waits until it
 * answers. */
export async function startGatewayProcess(
  openai: FakeUpstream,
  anthropic: FakeUpstream,
  options: GatewayProcessOptions = {},
): Promise<GatewayProcess> {
  const dir = options.dir ?? await dataTempDir();
  await Deno.writeTextFile(
    `${dir}/config.json`,
    JSON.stringify({
      // Port 0: the system picks a free one, which the start banner names (a port picked free
      // beforehand could be taken by another test's process before this one binds it).
      server: { hostname: "127.0.0.1", port: 0, shutdown_grace_seconds: 1 },
      kv: { path: `${dir}/kv.sqlite` },
      providers: [
        ...fakeProviders(openai, anthropic, options.provider),
        ...options.providers ?? [],
      ],
      models: [...FAKE_CHAT_MODELS, ...options.models ?? []],
      ...options.config,
    }),
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...startFlagsSync(), MAIN, "--config", `${dir}/config.json`],
    cwd: ROOT,
    env: { NO_COLOR: "1", OA_KEY: openai.apiKey, AN_KEY: anthropic.apiKey, ...options.env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const records: Record<string, unknown>[] = [];
  // stderr read as it comes: the start banner's address, then the rest for stop().
  const listening = Promise.withResolvers<string>();
  const stderr = (async () => {
    let text = "";
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      const banner = /listening on (http:\/\/[^\s;"]+:\d+)/.exec(text);
      if (banner) listening.resolve(banner[1]!);
    }
    listening.reject(new Error(`the gateway did not start: ${text}`));
    return text;
  })();
  const reading = (async () => {
    let buffer = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      const lines = buffer.split("\n");
      buffer = lines.pop()!;
      for (const line of lines) if (line !== "") records.push(JSON.parse(line));
    }
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tooLong = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("no start banner within 10 s")), 10_000);
  });
  let url: string;
  try {
    url = await Promise.race([listening.promise, tooLong]);
  } catch (e) {
    child.kill("SIGKILL");
    throw new Error(`the gateway did not start: ${await stderr}`, { cause: e });
  } finally {
    clearTimeout(timer);
  }
  await (await fetch(`${url}/healthz`)).body?.cancel();
  return {
    url,
    records,
    async record(match) {
      for (let i = 0; i < 1000; i++) {
        const found = records.find(match);
        if (found) return found;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error("no such record");
    },
    async stop(signal = "SIGTERM") {
      child.kill(signal);
      // A process that does not exit is a failure to report, not a test that hangs CI.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), STOP_MS);
      });
      const first = await Promise.race([child.status, late]);
      clearTimeout(timer);
      if (first === "late") child.kill("SIGKILL");
      const status = await child.status;
      await reading;
      const text = await stderr;
      if (options.dir === undefined) await Deno.remove(dir, { recursive: true });
      const note = first === "late" ? `\n(did not exit within ${STOP_MS} ms of SIGTERM)` : "";
      return { code: status.code, stderr: text + note };
    },
  };
}
