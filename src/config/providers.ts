/** The `providers` section: each upstream's style, address, key variable, limits and model
 * discovery. */
import { quote } from "../quote.ts";
import { type Fields, OPTIONAL, type Reader } from "../validation/reader.ts";
import { COUNT, OPTIONAL_TEXT, TEXT } from "./rules.ts";
import {
  ACCESS_LEVELS,
  type DiscoveryConfig,
  PROVIDER_STYLES,
  type ProviderConfig,
  type ProviderStyle,
  RERANK_FORMATS,
} from "./types.ts";

const DEFAULT_BASE_URL: Record<ProviderStyle, string> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
  gemini: "https://generativelanguage.googleapis.com",
  simulator: "",
};

/** The name of an environment variable (`ca_certs_env`). */
const ENV_NAME = {
  optional: true,
  nullable: true,
  maxLength: 256,
  pattern: /^[A-Za-z_][A-Za-z0-9_]*$/,
  format: "an environment variable name: letters, digits and _, not starting with a digit",
} as const;

/** Where an OpenAI-style upstream serves rerank, under its `base_url`. */
const RERANK_PATH = {
  optional: true,
  maxLength: 256,
  pattern: /^\/[A-Za-z0-9._~\/-]*$/,
  format: "a path under base_url starting with /, like /rerank or /v2/rerank",
} as const;

/** The styles whose upstream lists its models (`discover: true`). */
const DISCOVERING_STYLES: ReadonlySet<ProviderStyle> = new Set(["openai", "anthropic", "gemini"]);
const DISCOVERY_FIELDS = ["discover_prefix", "discover_access", "discover_interval_seconds"];
/** A model id prefix: empty, or the start of a model id (see `MODEL_ID`), 64 characters at most. */
const DISCOVER_PREFIX = {
  optional: true,
  maxLength: 64,
  pattern: /^(?:[A-Za-z0-9][A-Za-z0-9._:\/-]*)?$/,
  format:
    `"" or the start of a model id: letters, digits and . _ : / - (starting with a letter or digit)`,
} as const;

/** A provider's `discover` and the fields that go with it; `undefined` when it is off. */
function readDiscovery(f: Fields, id: string, style: ProviderStyle): DiscoveryConfig | undefined {
  const discover = f.boolean("discover", OPTIONAL) ?? false;
  if (!discover) {
    const stray = DISCOVERY_FIELDS.find((name) => f.has(name));
    if (stray) throw f.get(stray).invalid("only a provider with discover: true uses it");
    return undefined;
  }
  if (!DISCOVERING_STYLES.has(style)) {
    throw f.get("discover").invalid(
      `style ${style} has no model list to read; discover works with openai, anthropic and gemini`,
    );
  }
  const prefix = f.string("discover_prefix", DISCOVER_PREFIX) ?? `${id}/`;
  if (!DISCOVER_PREFIX.pattern.test(prefix) || prefix.length > DISCOVER_PREFIX.maxLength) {
    throw f.get("discover").invalid(
      `the default discover_prefix ${
        quote(prefix)
      } (the provider id and "/") cannot start a model id; set discover_prefix`,
    );
  }
  return {
    prefix,
    access: f.oneOf("discover_access", ACCESS_LEVELS, OPTIONAL) ?? "key",
    interval_seconds:
      f.integer("discover_interval_seconds", { optional: true, min: 60, max: 604_800 }) ??
        3600,
  };
}

function readProvider(r: Reader): ProviderConfig {
  const f = r.object();
  const id = f.string("id", TEXT);
  const style = f.oneOf("style", PROVIDER_STYLES);
  const remote = style !== "simulator";
  const provider: ProviderConfig = {
    id,
    style,
    base_url: "",
    api_key_env: null,
    ca_certs_env: null,
    timeout_ms: f.integer("timeout_ms", COUNT) ?? 120_000,
    max_retries: f.integer("max_retries", { optional: true, min: 0, max: 10 }) ?? 2,
    headers: {},
    token_delay_ms: style === "simulator"
      ? f.integer("token_delay_ms", { optional: true, min: 0, max: 60_000 }) ?? 0
      : 0,
    anthropic_version: style === "anthropic"
      ? f.string("anthropic_version", OPTIONAL_TEXT) ?? "2023-06-01"
      : "2023-06-01",
    responses_api: style === "openai" ? f.boolean("responses_api", OPTIONAL) ?? false : false,
    rerank_path: style === "openai" ? f.string("rerank_path", RERANK_PATH) ?? "/rerank" : "/rerank",
    rerank_format: style === "openai"
      ? f.oneOf("rerank_format", RERANK_FORMATS, OPTIONAL) ?? "cohere"
      : "cohere",
    max_response_bytes: f.integer("max_response_bytes", { optional: true, min: 1024 }) ??
      64 * 1024 * 1024,
    max_event_bytes: f.integer("max_event_bytes", { optional: true, min: 1024 }) ??
      8 * 1024 * 1024,
  };
  const discovery = readDiscovery(f, id, style);
  if (discovery) provider.discovery = discovery;
  if (remote) {
    const base = f.get("base_url");
    const url = base.string({ ...OPTIONAL_TEXT, maxLength: 2048 }) ?? DEFAULT_BASE_URL[style];
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      throw base.invalid(`expected an http(s) URL, but got ${quote(url)}`);
    }
    provider.base_url = url.replace(/\/+$/, "");
    provider.api_key_env =
      f.string("api_key_env", { optional: true, nullable: true, nonEmpty: true }) ??
        null;
    const caCerts = f.get("ca_certs_env");
    provider.ca_certs_env = caCerts.string(ENV_NAME) ?? null;
    if (provider.ca_certs_env !== null && new URL(url).protocol !== "https:") {
      throw caCerts.invalid("only a provider with an https base_url uses it");
    }
    for (const [name, value] of f.object("headers", OPTIONAL)?.entries() ?? []) {
      provider.headers[name] = value.string(TEXT);
    }
  }
  f.done();
  return provider;
}

/** The `providers` section by id (at least one; ids unique). */
export function readProviders(r: Reader): Map<string, ProviderConfig> {
  const providers = new Map<string, ProviderConfig>();
  for (const item of r.array({ minItems: 1 })) {
    const provider = readProvider(item);
    if (providers.has(provider.id)) {
      throw item.child("id", provider.id).invalid(
        `duplicate provider id ${quote(provider.id)}`,
      );
    }
    providers.set(provider.id, provider);
  }
  return providers;
}
