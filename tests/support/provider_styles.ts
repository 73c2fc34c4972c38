/** The upstream styles side by side: each one's fake and an adapter pointed at it. */
import type { ProviderConfig } from "../../src/config/types.ts";
import { AnthropicProvider } from "../../src/providers/anthropic/provider.ts";
import { GeminiProvider } from "../../src/providers/gemini/provider.ts";
import { OpenAIProvider } from "../../src/providers/openai/provider.ts";
import type { Provider, ProviderDeps } from "../../src/providers/types.ts";
import type { RetryTiming } from "../../src/providers/upstream/retry.ts";
import { startFakeAnthropic } from "./fake_anthropic.ts";
import { startFakeGemini } from "./fake_gemini.ts";
import { startFakeOpenAI } from "./fake_openai.ts";
import type { FakeOptions, FakeUpstream, Received } from "./fake_upstream.ts";
import type { CapturedOutput } from "./server.ts";
import { providerDeps } from "./provider_call.ts";

/** What {@link UpstreamStyle.make} builds. */
export interface Adapter {
  provider: Provider;
  /** The adapter's log output. */
  output: CapturedOutput;
  /** How many requests the adapter sent. */
  fetches: () => number;
}

/** The names of the styles. */
export type StyleName = "openai" | "anthropic" | "gemini";

export interface UpstreamStyle {
  name: StyleName;
  start(options?: FakeOptions): FakeUpstream;
  /** The `base_url` for a fake (or any server at `url`). */
  baseUrl(url: string): string;
  /** An adapter for `fake`'s base URL and key; retries wait about 1 ms. */
  make(
    url: string,
    apiKey: string | null,
    config?: Partial<ProviderConfig>,
  ): Adapter;
  /** The upstream model a request was for (in its body, or its path for Gemini). */
  modelOf(received: Received): string;
}

/** The adapter of a style for `deps`. */
export function styleProvider(
  style: StyleName,
  deps: ProviderDeps,
  timing: RetryTiming = {},
): Provider {
  switch (style) {
    case "openai":
      return new OpenAIProvider(deps, timing);
    case "anthropic":
      return new AnthropicProvider(deps, timing);
    case "gemini":
      return new GeminiProvider(deps, timing);
  }
}

function adapter(
  style: StyleName,
  baseUrl: string,
  apiKey: string | null,
  config: Partial<ProviderConfig>,
): Adapter {
  const deps = providerDeps(style, baseUrl, apiKey, config);
  let count = 0;
  const http = deps.http;
  deps.http = {
    request(request) {
      count++;
      return http.request(request);
    },
    close: () => http.close(),
  };
  const timing = { initialBackoffMs: 1, maxBackoffMs: 4 };
  const provider = styleProvider(style, deps, timing);
  return { provider, output: deps.output, fetches: () => count };
}

export const STYLES: UpstreamStyle[] = [
  {
    name: "openai",
    start: (options) => startFakeOpenAI(options),
    baseUrl: (url) => `${url}/v1`,
    make: (url, apiKey, config = {}) => adapter("openai", `${url}/v1`, apiKey, config),
    modelOf: bodyModel,
  },
  {
    name: "anthropic",
    start: (options) => startFakeAnthropic(options),
    baseUrl: (url) => url,
    make: (url, apiKey, config = {}) => adapter("anthropic", url, apiKey, config),
    modelOf: bodyModel,
  },
  {
    name: "gemini",
    start: (options) => startFakeGemini(options),
    baseUrl: (url) => url,
    make: (url, apiKey, config = {}) => adapter("gemini", url, apiKey, config),
    modelOf: (received) => /^\/v1beta\/models\/([^/:]+):/.exec(received.path)?.[1] ?? "",
  },
];

function bodyModel(received: Received): string {
  return (received.body as { model: string }).model;
}
