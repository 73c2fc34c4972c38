/**
 * A gateway on a real port with four chat models side by side: the simulator (`sim-vision`),
 * one behind the fake OpenAI-style upstream (`oa-chat`), one behind the fake Anthropic
 * upstream (`an-chat`) and one behind the fake Gemini upstream (`ge-chat`), with rate limits
 * no test reaches.
 */
import { startFakeAnthropic } from "./fake_anthropic.ts";
import { startFakeGemini } from "./fake_gemini.ts";
import { startFakeOpenAI } from "./fake_openai.ts";
import type { FakeUpstream } from "./fake_upstream.ts";
import { startServer, testConfig, type TestServer } from "./server.ts";

const GENEROUS = { per_minute: 100_000, per_day: 1_000_000 };
const CHAT_MODEL = { chat_completions: true, function_calling: true, image_input: true };

/** The gateway and the fakes behind it. */
export interface Gateway {
  server: TestServer;
  openai: FakeUpstream;
  anthropic: FakeUpstream;
  gemini: FakeUpstream;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Options for {@link startGateway}. */
export interface GatewayOptions {
  /** The fakes write their streams in slices of this many bytes. */
  sliceBytes?: number;
  /** Provider settings for the upstream providers (timeout_ms, max_retries…). */
  provider?: Record<string, unknown>;
  /** More models (on provider `oa` or `an`), e.g. moderation or image models. */
  models?: Record<string, unknown>[];
  /** Changes the raw config last (e.g. `logs`). */
  configure?: (raw: Record<string, unknown>) => void;
}

/** The config of the providers `oa` and `an` (and `ge` when given `gemini`) over the fakes
 * (keys in `OA_KEY`, `AN_KEY`, `GE_KEY`), with `settings` for each. */
export function fakeProviders(
  openai: FakeUpstream,
  anthropic: FakeUpstream,
  settings: Record<string, unknown> = {},
  gemini?: FakeUpstream,
): Record<string, unknown>[] {
  return [
    { id: "oa", style: "openai", base_url: `${openai.url}/v1`, api_key_env: "OA_KEY", ...settings },
    { id: "an", style: "anthropic", base_url: anthropic.url, api_key_env: "AN_KEY", ...settings },
    ...(gemini
      ? [{ id: "ge", style: "gemini", base_url: gemini.url, api_key_env: "GE_KEY", ...settings }]
      : []),
  ];
}

/** A chat model on each fake: `oa-chat` (upstream `gpt-up`) and `an-chat` (`claude-up`). */
export const FAKE_CHAT_MODELS: readonly Record<string, unknown>[] = [
  { id: "oa-chat", provider: "oa", upstream_model: "gpt-up", ...CHAT_MODEL },
  { id: "an-chat", provider: "an", upstream_model: "claude-up", ...CHAT_MODEL },
];

/** Starts both fakes and a gateway configured with a model on each. */
export async function startGateway(options: GatewayOptions = {}): Promise<Gateway> {
  const fakeOptions = options.sliceBytes ? { sliceBytes: options.sliceBytes } : {};
  const openai = startFakeOpenAI(fakeOptions);
  const anthropic = startFakeAnthropic(fakeOptions);
  const gemini = startFakeGemini(fakeOptions);
  const keys: Record<string, string> = {
    OA_KEY: openai.apiKey,
    AN_KEY: anthropic.apiKey,
    GE_KEY: gemini.apiKey,
  };
  const server = await startServer({
    config: testConfig((raw) => {
      (raw.providers as unknown[]).push(
        ...fakeProviders(openai, anthropic, options.provider, gemini),
      );
      (raw.models as unknown[]).push(
        ...FAKE_CHAT_MODELS,
        { id: "ge-chat", provider: "ge", upstream_model: "gemini-up", ...CHAT_MODEL },
        ...options.models ?? [],
      );
      raw.limits = {
        anonymous: { chat: GENEROUS, other: GENEROUS, images: GENEROUS },
        key: { chat: GENEROUS, other: GENEROUS, images: GENEROUS },
      };
      options.configure?.(raw);
    }),
    env: (name) => keys[name],
  });
  return {
    server,
    openai,
    anthropic,
    gemini,
    async [Symbol.asyncDispose]() {
      await server.close();
      await openai.close();
      await anthropic.close();
      await gemini.close();
    },
  };
}
