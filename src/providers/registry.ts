import type { ModelRecord } from "../catalogue/model.ts";
import type { Clock } from "../clock.ts";
import type { Config, ProviderConfig, ProviderStyle } from "../config/types.ts";
import { type ImageWork, ImageWorkers } from "../images/work.ts";
import type { HttpClient } from "../http/client/types.ts";
import { upstreamClient } from "../http/client/upstream_client.ts";
import type { Logger } from "../log/logger.ts";
import { AnthropicProvider } from "./anthropic/provider.ts";
import { azureProvider } from "./azure/provider.ts";
import { BedrockProvider } from "./bedrock/provider.ts";
import { awsCredentials } from "./bedrock/credentials.ts";
import { GeminiProvider } from "./gemini/provider.ts";
import { OpenAIProvider } from "./openai/provider.ts";
import { SimulatorProvider } from "./simulator/provider.ts";
import { vertexProvider } from "./vertex/provider.ts";
import { providerCaCerts } from "./ca_certs.ts";
import { type Provider, type ProviderDeps, type ProviderLookup, secretVariable } from "./types.ts";

// Where the simulator and the tests still import it from.

const FACTORIES: Record<ProviderStyle, (deps: ProviderDeps) => Provider> = {
  simulator: (deps) => new SimulatorProvider(deps),
  openai: (deps) => new OpenAIProvider(deps),
  anthropic: (deps) => new AnthropicProvider(deps),
  gemini: (deps) => new GeminiProvider(deps),
  azure: (deps) => azureProvider(deps),
  vertex: (deps) => vertexProvider(deps),
  bedrock: (deps) => new BedrockProvider(deps),
};

/** The configured providers; a provider whose key variable is unset is disabled. */
export class Providers implements ProviderLookup {
  readonly #enabled: Map<string, Provider>;
  readonly #disabled: Map<string, string>;
  readonly #images: ImageWork | null;
  readonly #clients: readonly HttpClient[];
  readonly #routed = new WeakMap<ModelRecord, Provider>();

  constructor(
    enabled: Map<string, Provider>,
    disabled: Map<string, string> = new Map(),
    images: ImageWork | null = null,
    clients: readonly HttpClient[] = [],
  ) {
    this.#enabled = enabled;
    this.#disabled = disabled;
    this.#images = images;
    this.#clients = clients;
  }

  /** Stops the image workers and closes the idle upstream connections. */
  close(): void {
    this.#images?.close();
    for (const client of this.#clients) client.close();
  }

  /** Lets the image workers stop whenever idle (see `ImageWork.release`). */
  release(): void {
    this.#images?.release?.();
  }

  /** The adapter for a provider id, or `undefined` when unknown or disabled. */
  get(id: string): Provider | undefined {
    return this.#enabled.get(id);
  }

  /** The adapter of a model with several routes, built by `build` once per catalogue record
   * (records are replaced, never changed, so a changed model gets a new one). Building it for
   * every request was a tenth of what three routes cost over one. */
  routed(record: ModelRecord, build: () => Provider): Provider {
    let provider = this.#routed.get(record);
    if (provider === undefined) {
      provider = build();
      this.#routed.set(record, provider);
    }
    return provider;
  }

  /** Whether the provider is configured and has its key. */
  isAvailable(id: string): boolean {
    return this.#enabled.has(id);
  }

  /** Why a provider is disabled, or `undefined`. */
  disabledReason(id: string): string | undefined {
    return this.#disabled.get(id);
  }
}

/** Options for {@link createProviders}. */
export interface CreateProvidersOptions {
  env: (name: string) => string | undefined;
  /** The client upstream calls go through, but those of a provider with `ca_certs_env`: it
   * gets a client of its own (see {@link upstreamClient}), so that no connection pool mixes
   * connections made under different trust. */
  http: HttpClient;
  clock: Clock;
  logger: Logger;
  /** Adapters to use instead of the built ones, by provider id (tests). */
  overrides?: ReadonlyMap<string, Provider>;
  /** Where image work runs; default a pool of Web Workers. */
  images?: ImageWork;
  /** Wraps each enabled adapter (tracing). */
  decorate?: (provider: Provider, config: ProviderConfig) => Provider;
}

/** Builds every configured provider, warning once for each one left disabled. Throws
 * `ConfigError` for a `ca_certs_env` without certificates (see {@link providerCaCerts}). */
export function createProviders(config: Config, options: CreateProvidersOptions): Providers {
  const trusting = trustingClients(
    config.providers.filter((provider) => !options.overrides?.has(provider.id)),
    options.env,
  );
  const enabled = new Map<string, Provider>();
  const disabled = new Map<string, string>();
  const images = options.images ?? new ImageWorkers();
  const decorate = options.decorate ?? ((provider: Provider) => provider);
  for (const provider of config.providers) {
    const override = options.overrides?.get(provider.id);
    if (override) {
      enabled.set(provider.id, decorate(override, provider));
      continue;
    }
    const variable = secretVariable(provider);
    const apiKey = variable === null ? null : options.env(variable) ?? null;
    const reason = variable !== null && !apiKey
      ? `${variable} is not set`
      : missingCredentials(provider, options.env);
    if (reason !== null) {
      disabled.set(provider.id, reason);
      options.logger.warn(
        `provider "${provider.id}" disabled: ${reason}; its models are not listed`,
      );
      continue;
    }
    enabled.set(
      provider.id,
      decorate(
        FACTORIES[provider.style]({
          config: provider,
          apiKey,
          env: options.env,
          http: trusting.get(provider.id) ?? options.http,
          clock: options.clock,
          logger: options.logger,
          images,
          includeContent: config.logs.include_content,
        }),
        provider,
      ),
    );
  }
  const clients = [options.http, ...new Set(trusting.values())];
  return new Providers(enabled, disabled, images, clients);
}

/** Why a provider's credentials beyond `api_key_env` are missing (bedrock's AWS keys), or
 * `null`. */
function missingCredentials(
  provider: ProviderConfig,
  env: (name: string) => string | undefined,
): string | null {
  // A Bedrock API key (`api_key_env`) stands for the AWS keys.
  if (provider.bedrock === undefined || provider.api_key_env !== null) return null;
  const credentials = awsCredentials(provider.bedrock, env);
  return "missing" in credentials ? credentials.missing : null;
}

/** The clients of the providers with `ca_certs_env`, by provider id: one per variable, so that
 * no pool mixes connections made under different trust. Every variable is read before any
 * client is built, so that one without certificates leaves nothing open. */
function trustingClients(
  providers: readonly ProviderConfig[],
  env: (name: string) => string | undefined,
): Map<string, HttpClient> {
  const certs = providers.map((provider) => [provider, providerCaCerts(provider, env)] as const);
  const byVariable = new Map<string, HttpClient>();
  const byProvider = new Map<string, HttpClient>();
  for (const [provider, caCerts] of certs) {
    if (caCerts === null) continue;
    const name = provider.ca_certs_env!;
    let client = byVariable.get(name);
    if (client === undefined) byVariable.set(name, client = upstreamClient(env, caCerts));
    byProvider.set(provider.id, client);
  }
  return byProvider;
}
