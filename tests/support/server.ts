import { type App, type AppDeps, createApp } from "../../src/app.ts";
import type { Clock } from "../../src/clock.ts";
import type { Config } from "../../src/config/types.ts";
import { parseConfig } from "../../src/config/parse.ts";
import type { LogOutput } from "../../src/log/logger.ts";
import { serveHttp } from "../../src/http/server/server.ts";

/** A clock that tests move by hand. */
export class FakeClock implements Clock {
  constructor(public ms = Date.UTC(2026, 0, 15, 12, 0, 0)) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

/** Captures what the app writes to stdout and stderr. */
export class CapturedOutput implements LogOutput {
  out = "";
  err = "";
  stdout(text: string): void {
    this.out += text;
  }
  stderr(text: string): void {
    this.err += text;
  }
  /** The JSON request records written so far. */
  records(): Record<string, unknown>[] {
    return this.out.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
  }
}

/** The simulator-only config the tests start from; `patch` edits the raw document. */
export function testConfig(patch: (raw: Record<string, unknown>) => void = () => {}): Config {
  const raw: Record<string, unknown> = {
    server: { port: 0, hostname: "127.0.0.1" },
    kv: { path: ":memory:" },
    providers: [{ id: "sim", style: "simulator" }],
    models: [
      {
        id: "sim-chat",
        provider: "sim",
        chat_completions: true,
        featured: true,
        labels: ["chat completions"],
      },
      {
        id: "sim-vision",
        provider: "sim",
        chat_completions: true,
        function_calling: true,
        image_input: true,
        featured: true,
        labels: ["chat completions", "multimodal", "function calling"],
      },
      {
        id: "sim-moderation",
        provider: "sim",
        moderation: true,
        image_input: true,
        default_moderation: true,
      },
      {
        id: "sim-image",
        provider: "sim",
        access: "preview",
        image_generation: {
          sizes: ["1024x1024", "1024x1792", "1792x1024"],
          max_n: 4,
          guidance_scale: true,
          num_inference_steps: true,
        },
      },
      { id: "sim-keyed", provider: "sim", chat_completions: true, access: "key" },
    ],
  };
  patch(raw);
  return parseConfig(raw, "test-config.json");
}

/** A running app on a real port, for end-to-end tests. */
export interface TestServer {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  app: App;
  kv: Deno.Kv;
  output: CapturedOutput;
  clock: Clock;
  /** Stops the server, closes the app and (if it opened it) the KV. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Options for {@link startServer}; anything in {@link AppDeps} may be overridden. */
export type StartOptions = Partial<AppDeps>;

/** Builds an app over an in-memory KV (unless one is given) and serves it on port 0. */
export async function startServer(options: StartOptions = {}): Promise<TestServer> {
  const ownKv = options.kv === undefined;
  const kv = options.kv ?? await Deno.openKv(":memory:");
  const output = new CapturedOutput();
  const clock = options.clock ?? new FakeClock();
  const app = await createApp({
    config: options.config ?? testConfig(),
    env: () => undefined,
    output,
    logFlushMs: 5,
    ...options,
    clock,
    kv,
  });
  const server = serveHttp({ port: 0, hostname: "127.0.0.1" }, app.handler);
  const close = async () => {
    await server.shutdown();
    await app.close();
    if (ownKv) kv.close();
  };
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    app,
    kv,
    output,
    clock,
    close,
    [Symbol.asyncDispose]: close,
  };
}
