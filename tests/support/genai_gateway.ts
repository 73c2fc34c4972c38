/**
 * The gateway on a real port for the Gemini front door's end-to-end tests: a chat model per
 * back end side by side — the simulator (`sim-vision`), and models behind the fake OpenAI-style
 * (`oa-chat`), Anthropic-style (`an-chat`) and Gemini-style (`ge-chat`) upstreams — with the
 * admin API on (to make keys) and `@google/genai` clients pointed at it.
 */
import { GoogleGenAI } from "npm:@google/genai@3.3.0";
import { ADMIN_TOKEN } from "./admin.ts";
import { startFakeAnthropic } from "./fake_anthropic.ts";
import { type FakeGemini, startFakeGemini } from "./fake_gemini.ts";
import { startFakeOpenAI } from "./fake_openai.ts";
import type { FakeUpstream } from "./fake_upstream.ts";
import { CALL_TIMEOUT_MS, createKey } from "./sdk_gateway.ts";
import { startServer, testConfig, type TestServer } from "./server.ts";

const GENEROUS = { per_minute: 100_000, per_day: 1_000_000 };
const CHAT_MODEL = { chat_completions: true, function_calling: true, image_input: true };

/** A back end as the tests name it, and the model on it. */
export interface Backend {
  name: "simulator" | "openai" | "anthropic" | "gemini";
  model: string;
}

/** The four back ends, in the order the tests run them. */
export const BACKENDS: readonly Backend[] = [
  { name: "simulator", model: "sim-vision" },
  { name: "openai", model: "oa-chat" },
  { name: "anthropic", model: "an-chat" },
  { name: "gemini", model: "ge-chat" },
];

/** The gateway, the fakes behind it and a key. */
export interface GenaiGateway {
  server: TestServer;
  gemini: FakeGemini;
  apiKey: string;
  /** The fake behind a back end (`null` for the simulator). */
  fakeOf(backend: Backend): FakeUpstream | null;
  /** The SDK on the gateway with its key (or `apiKey`), `apiVersion` `v1beta` unless told. */
  client(options?: { apiKey?: string; apiVersion?: string }): GoogleGenAI;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts the fakes (streams written `sliceBytes` at a time) and the gateway. */
export async function startGenaiGateway(sliceBytes = 7): Promise<GenaiGateway> {
  const openai = startFakeOpenAI({ sliceBytes });
  const anthropic = startFakeAnthropic({ sliceBytes });
  const gemini = startFakeGemini({ sliceBytes });
  const fakes = [openai, anthropic, gemini];
  const env: Record<string, string> = {
    OA_KEY: openai.apiKey,
    AN_KEY: anthropic.apiKey,
    GE_KEY: gemini.apiKey,
    SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN,
  };
  let server: TestServer | null = null;
  try {
    server = await startServer({
      config: testConfig((raw) => {
        (raw.providers as unknown[]).push(
          { id: "oa", style: "openai", base_url: `${openai.url}/v1`, api_key_env: "OA_KEY" },
          { id: "an", style: "anthropic", base_url: anthropic.url, api_key_env: "AN_KEY" },
          { id: "ge", style: "gemini", base_url: gemini.url, api_key_env: "GE_KEY" },
        );
        for (const p of raw.providers as Record<string, unknown>[]) {
          if (p.id !== "sim") p.max_retries = 0;
        }
        (raw.models as unknown[]).push(
          { id: "oa-chat", provider: "oa", upstream_model: "gpt-up", ...CHAT_MODEL },
          { id: "an-chat", provider: "an", upstream_model: "claude-up", ...CHAT_MODEL },
          { id: "ge-chat", provider: "ge", upstream_model: "gemini-up", ...CHAT_MODEL },
        );
        raw.limits = {
          anonymous: { chat: GENEROUS, other: GENEROUS, images: GENEROUS },
          key: { chat: GENEROUS, other: GENEROUS, images: GENEROUS },
        };
      }),
      env: (name) => env[name],
    });
    const apiKey = await createKey(server);
    const running = server;
    return {
      server: running,
      gemini,
      apiKey,
      fakeOf: (backend) =>
        backend.name === "openai"
          ? openai
          : backend.name === "anthropic"
          ? anthropic
          : backend.name === "gemini"
          ? gemini
          : null,
      client: (options = {}) =>
        new GoogleGenAI({
          apiKey: options.apiKey ?? apiKey,
          apiVersion: options.apiVersion ?? "v1beta",
          httpOptions: { baseUrl: running.url, timeout: CALL_TIMEOUT_MS },
        }),
      async [Symbol.asyncDispose]() {
        await running.close();
        for (const fake of fakes) await fake.close();
      },
    };
  } catch (error) {
    await server?.close();
    for (const fake of fakes) await fake.close();
    throw error;
  }
}
