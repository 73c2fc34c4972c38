/**
 * What the `--expose-gc` probes (`scavenge_probe.ts`, `stream_prompt_probe.ts`) share: V8's
 * `gc`, and an app in this process over a KV file of its own, with one provider whose HTTP
 * calls go to `fetch` and one chat model on it, anonymous limits raised out of the way.
 */
import { type App, createApp } from "../../src/app.ts";
import { parseConfig } from "../../src/config/parse.ts";
import { FetchHttpClient } from "../../src/http/client/fetch.ts";

/** V8's collector, as `--v8-flags=--expose-gc` exposes it. */
export function exposedGc(): (options: object) => void {
  const gc = (globalThis as { gc?: (options: object) => void }).gc;
  if (!gc) throw new Error("run with --v8-flags=--expose-gc");
  return gc;
}

/** The provider and model of a probe's app. */
export interface ProbeAppOptions {
  /** The temporary directory's prefix. */
  prefix: string;
  /** The provider's (and the model's) id. */
  id: string;
  style: "openai" | "anthropic";
  /** Where the provider's calls go. */
  fetch: typeof fetch;
  /** More fields of the model. */
  model?: Record<string, unknown>;
}

/** A probe's app, its KV, and `close` for both (the KV's directory removed). */
export interface ProbeApp {
  app: App;
  kv: Deno.Kv;
  close(): Promise<void>;
}

/** Builds the app of {@link ProbeAppOptions}. */
export async function probeApp(options: ProbeAppOptions): Promise<ProbeApp> {
  const { id, style } = options;
  const dir = await Deno.makeTempDir({ prefix: options.prefix });
  const path = `${dir}/kv.sqlite`;
  const kv = await Deno.openKv(path);
  const config = parseConfig({
    server: { hostname: "127.0.0.1", port: 0 },
    kv: { path },
    providers: [{
      id,
      style,
      base_url: style === "openai" ? "http://upstream.invalid/v1" : "http://upstream.invalid",
      api_key_env: "PROBE_KEY",
      max_retries: 0,
    }],
    models: [{ id, provider: id, chat_completions: true, ...options.model }],
    limits: { anonymous: { chat: { per_minute: 1_000_000_000, per_day: 1_000_000_000 } } },
  }, "probe");
  const app = await createApp({
    config,
    kv,
    env: (name) => (name === "PROBE_KEY" ? "sk-probe" : undefined),
    http: new FetchHttpClient(options.fetch),
    output: { stdout() {}, stderr() {} },
  });
  return {
    app,
    kv,
    async close() {
      await app.close();
      kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}
