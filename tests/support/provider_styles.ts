/** The two upstream styles side by side: each one's fake and an adapter pointed at it. */
import type { ProviderConfig } from "../../src/config.ts";
import { AnthropicProvider } from "../../src/providers/anthropic.ts";
import { OpenAIProvider } from "../../src/providers/openai.ts";
import type { Provider } from "../../src/providers/types.ts";
import { startFakeAnthropic } from "./fake_anthropic.ts";
import { startFakeOpenAI } from "./fake_openai.ts";
import type { FakeOptions, FakeUpstream } from "./fake_upstream.ts";
import type { CapturedOutput } from "./server.ts";
import { providerDeps } from "./provider_call.ts";

/** What {@link UpstreamStyle.make} builds. */
export interface Adapter {
  provider: Provider;
  /** The adapter's log output. */
  output: CapturedOutput;
  /** How many times the adapter called fetch. */
  fetches: () => number;
}

export interface UpstreamStyle {
  name: "openai" | "anthropic";
  start(options?: FakeOptions): FakeUpstream;
  /** The `base_url` for a fake (or any server at `url`). */
  baseUrl(url: string): string;
  /** An adapter for `fake`'s base URL and key; retries wait about 1 ms. */
  make(
    url: string,
    apiKey: string | null,
    config?: Partial<ProviderConfig>,
  ): Adapter;
}

function adapter(
  style: "openai" | "anthropic",
  baseUrl: string,
  apiKey: string | null,
  config: Partial<ProviderConfig>,
): Adapter {
  const deps = providerDeps(style, baseUrl, apiKey, config);
  let count = 0;
  deps.fetch = (input, init) => {
    count++;
    return fetch(input, init);
  };
  const timing = { initialBackoffMs: 1, maxBackoffMs: 4 };
  const provider = style === "openai"
    ? new OpenAIProvider(deps, timing)
    : new AnthropicProvider(deps, timing);
  return { provider, output: deps.output, fetches: () => count };
}

export const STYLES: UpstreamStyle[] = [
  {
    name: "openai",
    start: (options) => startFakeOpenAI(options),
    baseUrl: (url) => `${url}/v1`,
    make: (url, apiKey, config = {}) => adapter("openai", `${url}/v1`, apiKey, config),
  },
  {
    name: "anthropic",
    start: (options) => startFakeAnthropic(options),
    baseUrl: (url) => url,
    make: (url, apiKey, config = {}) => adapter("anthropic", url, apiKey, config),
  },
];
