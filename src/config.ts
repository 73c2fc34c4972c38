import { isNotGranted, outsideGrants } from "./serve/grants.ts";
import { DEFAULT_KV_PATH } from "./kv/open.ts";
import { quote } from "./quote.ts";
import { ValidationError } from "./validation/error.ts";
import {
  type ArrayRules,
  type Fields,
  OPTIONAL,
  type Reader,
  readJson,
} from "./validation/reader.ts";

/** Provider API styles that Switchyard can speak. */
export const PROVIDER_STYLES = ["openai", "anthropic", "gemini", "simulator"] as const;
export type ProviderStyle = typeof PROVIDER_STYLES[number];

/** Model access levels (DESIGN §4). */
export const ACCESS_LEVELS = ["public", "key", "preview"] as const;
export type Access = typeof ACCESS_LEVELS[number];

/** Rate-limit scopes (DESIGN §8). */
export const LIMIT_SCOPES = ["chat", "other", "images"] as const;
export type LimitScope = typeof LIMIT_SCOPES[number];

/** The moderation categories of spec §2.7, in the spec's order. */
export const MODERATION_CATEGORIES = [
  "sexual",
  "hate",
  "harassment",
  "self-harm",
  "sexual/minors",
  "hate/threatening",
  "violence/graphic",
  "self-harm/intent",
  "self-harm/instructions",
  "harassment/threatening",
  "violence",
] as const;
export type ModerationCategory = typeof MODERATION_CATEGORIES[number];

/** Capabilities a model may claim, checked against what its provider style can serve. */
export type Capability =
  | "chat_completions"
  | "moderation"
  | "image_input"
  | "function_calling"
  | "image_generation"
  | "embeddings";

/** What each provider style can serve. Anthropic moderates through a guard prompt. */
export const STYLE_CAPABILITIES: Record<ProviderStyle, ReadonlySet<Capability>> = {
  simulator: new Set([
    "chat_completions",
    "moderation",
    "image_input",
    "function_calling",
    "image_generation",
    "embeddings",
  ]),
  openai: new Set([
    "chat_completions",
    "moderation",
    "image_input",
    "function_calling",
    "image_generation",
    "embeddings",
  ]),
  anthropic: new Set(["chat_completions", "moderation", "image_input", "function_calling"]),
  gemini: new Set(["chat_completions", "image_input", "function_calling"]),
};

export interface ServerConfig {
  hostname: string;
  port: number;
  /** `false`, or the number of trusted proxy hops in front of us (`true` = 1). */
  trust_proxy: number;
  max_body_bytes: number;
  cors_origins: string[];
  /** Seconds that in-flight streams get to finish on SIGTERM. */
  shutdown_grace_seconds: number;
  /** Milliseconds a request body may take to arrive in full; slower ones are cut with 408. */
  body_timeout_ms: number;
  /** Leading bits of an IPv6 client address that anonymous limits count by (64: a /64). */
  ipv6_prefix: number;
  /** Whether several processes may listen on the port (SO_REUSEPORT, Linux): one per core. */
  reuse_port: boolean;
}

export interface ProviderConfig {
  id: string;
  style: ProviderStyle;
  base_url: string;
  /** Name of the environment variable that holds the API key; `null` for none. */
  api_key_env: string | null;
  timeout_ms: number;
  max_retries: number;
  headers: Record<string, string>;
  /** Simulator only: delay per generated token, in milliseconds. */
  token_delay_ms: number;
  /** Anthropic only: the `anthropic-version` header. */
  anthropic_version: string;
  /** OpenAI style only: whether the upstream has the Responses API (`/v1/responses`), so that
   * Responses requests pass through to it rather than through chat completions. */
  responses_api: boolean;
  /** Bytes an upstream answer (a JSON body, or a whole stream) may have; past it the call ends
   * with 502 or an SSE error event. */
  max_response_bytes: number;
  /** Bytes one SSE event (or line) of an upstream stream may have. */
  max_event_bytes: number;
  /** Present when the provider has `discover: true`: how the models its upstream lists are
   * offered (src/catalogue/discovery.ts). */
  discovery?: DiscoveryConfig;
}

/** A provider's model discovery (`discover_prefix`, `discover_access`,
 * `discover_interval_seconds`). */
export interface DiscoveryConfig {
  /** Put before each upstream id to make the catalogue id (default `"<provider id>/"`). */
  prefix: string;
  /** The access level of the models found (default `key`). */
  access: Access;
  /** Seconds between two listings. */
  interval_seconds: number;
}

export interface ImageGenerationConfig {
  sizes: string[];
  max_n: number;
  guidance_scale: boolean;
  num_inference_steps: boolean;
}

/** A model's `embeddings` (`true`, or an object of these fields): what `POST /v1/embeddings`
 * checks before the call. */
export interface EmbeddingsConfig {
  /** The length of the model's vectors; `null`: not stated (the upstream's own). The
   * simulator's default is {@link SIMULATOR_EMBEDDING_DIMENSIONS}. */
  dimensions: number | null;
  /** Whether a request may ask for shorter vectors (`dimensions`; default true). */
  custom_dimensions: boolean;
  /** Inputs in one request, at most (default 2048, OpenAI's). */
  max_inputs: number;
  /** Tokens of one input, at most (default 8192, OpenAI's): token-id arrays are counted
   * exactly, text at four characters a token. */
  max_input_tokens: number;
}

/** The vector length of a simulator embedding model that states none. */
export const SIMULATOR_EMBEDDING_DIMENSIONS = 256;

/** One way to reach a model (DESIGN §6.3): a provider and its name for the model. */
export interface RouteConfig {
  provider: string;
  upstream_model: string;
  /** Share of the traffic among routes of the same priority (relative; default 1). */
  weight: number;
  /** Lower is preferred: routes of a higher priority serve only when those of the best
   * priority fail or are broken (default 0). */
  priority: number;
}

export interface ModelConfig {
  id: string;
  /** The provider (of the first route, when the model has `routes`). */
  provider: string;
  upstream_model: string;
  /** The model's routes when it has several ways to reach it; absent: `provider` alone. */
  routes?: RouteConfig[];
  /** With routes: a stream cut after its first event goes on on the next route that takes a
   * prefill (the partial answer as the assistant's start), so the client sees one stream. */
  continue_on_failure?: boolean;
  owned_by: string;
  /** Unix seconds; `null` means "when first registered in KV". */
  created: number | null;
  chat_completions: boolean;
  moderation: boolean;
  image_input: boolean;
  function_calling: boolean;
  image_generation: ImageGenerationConfig | null;
  /** Served on `POST /v1/embeddings`, with these settings; `null`: not an embedding model. */
  embeddings: EmbeddingsConfig | null;
  access: Access;
  featured: boolean;
  labels: string[];
  context_length: number | null;
  /** `max_tokens` for chat requests that send none; `null`: the gateway's default, 256. */
  default_max_tokens: number | null;
  default_moderation: boolean;
  /** How a moderation model moderates: the upstream's moderation API, or a guard prompt. */
  moderation_mode: "native" | "guard";
  moderation_thresholds: Partial<Record<ModerationCategory, number>>;
  enabled: boolean;
  /** What its tokens cost; absent: free (DESIGN §4.1). */
  pricing?: Pricing;
}

/** A model's prices in currency units per million tokens. */
export interface Pricing {
  input: number;
  output: number;
  /** Input tokens read from the provider's prompt cache (default: `input`). */
  cached_input?: number;
  /** Input tokens written to the provider's prompt cache (default: `input`). */
  cache_write?: number;
}

export interface WindowLimit {
  per_minute: number | null;
  per_day: number | null;
  /** Chat only: input + output tokens per minute and per day (absent or `null`: no limit). */
  tokens_per_minute?: number | null;
  tokens_per_day?: number | null;
}

export type ScopeLimits = Record<LimitScope, WindowLimit>;

export interface LimitsConfig {
  anonymous: ScopeLimits;
  key: ScopeLimits;
  /** Pixels (width × height, as its header declares) of one input image, at most. */
  max_image_pixels: number;
  /** Bytes of one input image (decoded from base64), at most. */
  max_image_bytes: number;
  /** Pixels of all input images of one request together, at most. */
  max_request_image_pixels: number;
  /** Bytes of all input images of one request together, at most. */
  max_request_image_bytes: number;
}

export interface LogsConfig {
  retention_days: number;
  include_content: boolean;
  /** Records one process writes to the KV log per minute, at most; past it records go to
   * stdout only (and are counted), so no caller can fill the disk. */
  max_records_per_minute: number;
}

/** What the web pages say about this service (`site`). */
export interface SiteConfig {
  /** The service's name, in page titles and headings. */
  name: string;
  /** One or two sentences under the name on the catalogue page. */
  description: string;
  /** How to reach the operator (for keys, more models or higher limits), or `null`. */
  contact: string | null;
}

export interface MetricsConfig {
  /** Whether `GET /metrics` is served (with the admin token or the metrics token). */
  enabled: boolean;
  /** The environment variable holding a token that reads `/metrics` only (default
   * `SWITCHYARD_METRICS_TOKEN`), or `null` for none. */
  token_env: string | null;
}

/** The whole, validated configuration with every default filled in. */
export interface Config {
  server: ServerConfig;
  /** A local file (default `data/switchyard.kv`), `:memory:`, a KV Connect URL, or `null` for
   * Deno's default location (the managed KV on Deno Deploy). */
  kv: { path: string | null };
  providers: ProviderConfig[];
  models: ModelConfig[];
  limits: LimitsConfig;
  logs: LogsConfig;
  site: SiteConfig;
  metrics: MetricsConfig;
}

/** A configuration error; the message names the file and the field path. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** A config string: non-empty, at most 256 characters (a record must fit a KV value). */
const TEXT = { nonEmpty: true, maxLength: 256 } as const;
const OPTIONAL_TEXT = { ...TEXT, optional: true } as const;
/** A count that may be left out. */
const COUNT = { optional: true, min: 1 } as const;
/** A count that may be left out, or `null` for none (unlimited, unknown). */
const NULLABLE_COUNT = { optional: true, nullable: true, min: 1 } as const;
/** A string list: at most 64 items. */
const STRINGS = { optional: true, maxItems: 64 } as const;

/** A list of config strings, or `undefined` when absent. */
function readStrings(r: Reader, rules: ArrayRules = STRINGS): string[] | undefined {
  return r.array({ ...rules, optional: true })?.map((item) => item.string(TEXT));
}

/** An optional object field as a reader of `{}` when absent or `null` (its defaults). */
function orEmpty(r: Reader): Reader {
  return r.value === undefined || r.value === null ? r.with({}) : r;
}

const SIZE_PATTERN = /^([1-9][0-9]{1,4})x([1-9][0-9]{1,4})$/;

/** Parses `WIDTHxHEIGHT`; `null` when malformed or outside 16-8192 pixels a side. */
export function parseSize(size: string): { width: number; height: number } | null {
  const m = SIZE_PATTERN.exec(size);
  if (!m) return null;
  const width = Number(m[1]);
  const height = Number(m[2]);
  if (width < 16 || height < 16 || width > 8192 || height > 8192) return null;
  return { width, height };
}

/** The image caps of `limits` when the config sets none. */
export const DEFAULT_IMAGE_CAPS: Readonly<
  Pick<
    LimitsConfig,
    "max_image_pixels" | "max_image_bytes" | "max_request_image_pixels" | "max_request_image_bytes"
  >
> = {
  max_image_pixels: 33_554_432,
  max_image_bytes: 20 * 1024 * 1024,
  max_request_image_pixels: 134_217_728,
  max_request_image_bytes: 20 * 1024 * 1024,
};

const DEFAULT_LIMITS: LimitsConfig = {
  ...DEFAULT_IMAGE_CAPS,
  anonymous: {
    chat: { per_minute: 10, per_day: 500 },
    other: { per_minute: null, per_day: 50_000 },
    images: { per_minute: 2, per_day: 20 },
  },
  key: {
    chat: { per_minute: 60, per_day: 10_000 },
    other: { per_minute: null, per_day: 500_000 },
    images: { per_minute: 10, per_day: 500 },
  },
};

const ORIGIN = /^https?:\/\/[^/\s]+$/;

function readServer(r: Reader): ServerConfig {
  const f = orEmpty(r).object();
  const trust = f.get("trust_proxy");
  const server: ServerConfig = {
    hostname: f.string("hostname", OPTIONAL_TEXT) ?? "0.0.0.0",
    port: f.integer("port", { optional: true, min: 0, max: 65535 }) ?? 8000,
    trust_proxy: trust.value === true
      ? 1
      : trust.value === undefined || trust.value === false
      ? 0
      : trust.integer({ min: 1, max: 32, expected: "true, false or a number of hops (1\u201332)" }),
    max_body_bytes: f.integer("max_body_bytes", COUNT) ?? 20 * 1024 * 1024,
    cors_origins: ["*"],
    shutdown_grace_seconds: f.integer("shutdown_grace_seconds", { optional: true, min: 0 }) ??
      10,
    body_timeout_ms: f.integer("body_timeout_ms", { optional: true, min: 100, max: 3_600_000 }) ??
      30_000,
    ipv6_prefix: f.integer("ipv6_prefix", { optional: true, min: 1, max: 128 }) ?? 64,
    reuse_port: f.boolean("reuse_port", OPTIONAL) ?? false,
  };
  const origins = f.array("cors_origins", STRINGS);
  if (origins !== undefined) {
    server.cors_origins = origins.map((item) => {
      const origin = item.string(TEXT);
      if (origin !== "*" && !ORIGIN.test(origin)) {
        throw item.invalid(
          `expected "*" or an origin like "https://app.example.com", but got ${quote(origin)}`,
        );
      }
      return origin;
    });
  }
  f.done();
  return server;
}

const DEFAULT_BASE_URL: Record<ProviderStyle, string> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
  gemini: "https://generativelanguage.googleapis.com",
  simulator: "",
};

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
    for (const [name, value] of f.object("headers", OPTIONAL)?.entries() ?? []) {
      provider.headers[name] = value.string(TEXT);
    }
  }
  f.done();
  return provider;
}

function readImageGeneration(r: Reader): ImageGenerationConfig {
  const f = r.object();
  const sizes = f.get("sizes");
  const image: ImageGenerationConfig = {
    sizes: readStrings(sizes, { ...STRINGS, minItems: 1 }) ?? ["1024x1024"],
    max_n: f.integer("max_n", { optional: true, min: 1, max: 10 }) ?? 1,
    guidance_scale: f.boolean("guidance_scale", OPTIONAL) ?? false,
    num_inference_steps: f.boolean("num_inference_steps", OPTIONAL) ?? false,
  };
  image.sizes.forEach((size, i) => {
    if (!parseSize(size)) {
      throw sizes.child(i, size).invalid(
        `expected WIDTHxHEIGHT with 16\u20138192 pixels a side, like "1024x1024", but got ${
          quote(size)
        }`,
      );
    }
  });
  f.done();
  return image;
}

const THRESHOLD = { optional: true, min: 0, max: 1 } as const;
/** Routes of one model at most. */
const MAX_ROUTES = 16;

/** 400-style error for a provider id the config does not have. */
function unknownProvider(
  field: Reader,
  id: string,
  providers: ReadonlyMap<string, ProviderConfig>,
): Error {
  const known = [...providers.keys()].map((p) => `"${p}"`).join(", ");
  return field.invalid(`unknown provider ${quote(id)} (known: ${known})`);
}

/** A model's `routes` (DESIGN §4.1): each a known provider and its model id, with a weight and
 * a priority; a model has either `provider` or `routes`. */
function readRoutes(
  f: Fields,
  providers: ReadonlyMap<string, ProviderConfig>,
  id: string,
): RouteConfig[] {
  const field = f.get("routes");
  if (f.has("provider") || f.has("upstream_model")) {
    throw field.invalid("a model has either provider (and upstream_model) or routes, not both");
  }
  const items = f.array("routes", { minItems: 1, maxItems: MAX_ROUTES })!;
  return items.map((item) => {
    const r = item.object();
    const providerId = r.string("provider", TEXT);
    if (!providers.has(providerId)) throw unknownProvider(r.get("provider"), providerId, providers);
    const route: RouteConfig = {
      provider: providerId,
      upstream_model: r.string("upstream_model", OPTIONAL_TEXT) ?? id,
      weight: r.number("weight", { optional: true, min: 0.001, max: 1_000_000 }) ?? 1,
      priority: r.integer("priority", { optional: true, min: 0, max: 100 }) ?? 0,
    };
    r.done();
    return route;
  });
}
const PRICE = { min: 0, max: 1_000_000 } as const;

/** A model's `pricing`, or `null` when it has none (free). */
function readPricing(r: Reader): Pricing | null {
  const f = r.object({ optional: true, nullable: true });
  if (f === undefined || f === null) return null;
  const pricing: Pricing = { input: f.number("input", PRICE), output: f.number("output", PRICE) };
  for (const name of ["cached_input", "cache_write"] as const) {
    const price = f.number(name, { ...PRICE, optional: true });
    if (price !== undefined) pricing[name] = price;
  }
  f.done();
  return pricing;
}

/** Score thresholds by moderation category; other keys are unknown parameters. */
function readThresholds(r: Reader): Partial<Record<ModerationCategory, number>> {
  const f = r.object(OPTIONAL);
  const out: Partial<Record<ModerationCategory, number>> = {};
  if (f === undefined) return out;
  for (const category of MODERATION_CATEGORIES) {
    const threshold = f.number(category, THRESHOLD);
    if (threshold !== undefined) out[category] = threshold;
  }
  f.done();
  return out;
}

/** The rule of a model id (config, admin API, discovered models). */
export const MODEL_ID = {
  pattern: /^[A-Za-z0-9][A-Za-z0-9._:\/-]{0,127}$/,
  format:
    "a model id of letters, digits and . _ : / - (at most 128, starting with a letter or digit)",
} as const;
const MODERATION_MODES = ["native", "guard"] as const;
const CAPABILITIES = [
  "chat_completions",
  "moderation",
  "image_input",
  "function_calling",
  "embeddings",
] as const;

/** The fields of a model entry. */
const MODEL_FIELDS = [
  "id",
  "provider",
  "upstream_model",
  "owned_by",
  "created",
  "chat_completions",
  "moderation",
  "image_input",
  "function_calling",
  "image_generation",
  "embeddings",
  "access",
  "featured",
  "labels",
  "context_length",
  "default_max_tokens",
  "default_moderation",
  "moderation_mode",
  "moderation_thresholds",
  "enabled",
] as const;

/** Rejects the first field that was not read, naming the closest known field when one is
 * near (a misspelt capability is named as unknown rather than leaving a model serving
 * nothing). */
function doneWithSuggestion(f: Fields, known: readonly string[]): void {
  try {
    f.done();
  } catch (e) {
    if (!(e instanceof ValidationError) || e.code !== "unknown_parameter") throw e;
    const name = e.path.slice(e.path.lastIndexOf(".") + 1);
    const closest = closestName(name, known);
    if (closest === null) throw e;
    throw new ValidationError(
      "unknown_parameter",
      e.path,
      `unknown field; did you mean "${closest}"?`,
      `${e.message} Did you mean '${closest}'?`,
    );
  }
}

/** The name in `known` nearest to `name` by edit distance, if within a third of its length. */
export function closestName(name: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of known) {
    const d = editDistance(name.toLowerCase(), candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

/** Levenshtein distance (names are short). */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(
        row[j]! + 1,
        next[j - 1]! + 1,
        row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    row = next;
  }
  return row[b.length]!;
}

/** A model's `embeddings` object (`true` reads as `{}`: every default). */
function readEmbeddings(r: Reader, provider: ProviderConfig): EmbeddingsConfig {
  const f = r.object({ expected: "a boolean or an object" });
  const dimensions = f.integer("dimensions", { optional: true, min: 1, max: 65_536 });
  const embeddings: EmbeddingsConfig = {
    dimensions: dimensions ??
      (provider.style === "simulator" ? SIMULATOR_EMBEDDING_DIMENSIONS : null),
    custom_dimensions: f.boolean("custom_dimensions", OPTIONAL) ?? true,
    max_inputs: f.integer("max_inputs", { optional: true, min: 1, max: 100_000 }) ?? 2048,
    max_input_tokens: f.integer("max_input_tokens", { optional: true, min: 1, max: 10_000_000 }) ??
      8192,
  };
  f.done();
  return embeddings;
}

/** Validates one model entry; `providers` resolves its provider id. */
export function readModel(
  r: Reader,
  providers: ReadonlyMap<string, ProviderConfig>,
): ModelConfig {
  const f = r.object();
  const id = f.string("id", MODEL_ID);
  const routes = f.has("routes") ? readRoutes(f, providers, id) : undefined;
  const providerId = routes ? routes[0]!.provider : f.string("provider", TEXT);
  const provider = providers.get(providerId);
  if (!provider) throw unknownProvider(f.get("provider"), providerId, providers);
  const image = f.get("image_generation");
  const embeddings = f.get("embeddings");
  const model: ModelConfig = {
    id,
    provider: providerId,
    upstream_model: routes
      ? routes[0]!.upstream_model
      : f.string("upstream_model", OPTIONAL_TEXT) ?? id,
    owned_by: f.string("owned_by", OPTIONAL_TEXT) ?? providerId,
    created: f.integer("created", NULLABLE_COUNT) ?? null,
    chat_completions: f.boolean("chat_completions", OPTIONAL) ?? false,
    moderation: f.boolean("moderation", OPTIONAL) ?? false,
    image_input: f.boolean("image_input", OPTIONAL) ?? false,
    function_calling: f.boolean("function_calling", OPTIONAL) ?? false,
    image_generation: image.value === undefined || image.value === null || image.value === false
      ? null
      : readImageGeneration(image.value === true ? image.with({}) : image),
    embeddings: embeddings.value === undefined || embeddings.value === null ||
        embeddings.value === false
      ? null
      : readEmbeddings(embeddings.value === true ? embeddings.with({}) : embeddings, provider),
    access: f.oneOf("access", ACCESS_LEVELS, OPTIONAL) ?? "public",
    featured: f.boolean("featured", OPTIONAL) ?? false,
    labels: readStrings(f.get("labels")) ?? [],
    context_length: f.integer("context_length", NULLABLE_COUNT) ?? null,
    default_max_tokens: f.integer("default_max_tokens", NULLABLE_COUNT) ?? null,
    default_moderation: f.boolean("default_moderation", OPTIONAL) ?? false,
    moderation_mode: f.oneOf("moderation_mode", MODERATION_MODES, OPTIONAL) ??
      (provider.style === "anthropic" ? "guard" : "native"),
    moderation_thresholds: readThresholds(f.get("moderation_thresholds")),
    enabled: f.boolean("enabled", OPTIONAL) ?? true,
  };
  const pricing = readPricing(f.get("pricing"));
  if (pricing !== null) model.pricing = pricing;
  if (routes) model.routes = routes;
  const continues = f.boolean("continue_on_failure", OPTIONAL);
  if (continues !== undefined) {
    if (!routes) {
      throw f.get("continue_on_failure").invalid("only a model with routes can continue on one");
    }
    model.continue_on_failure = continues;
  }
  for (const route of routes ?? [{ provider: providerId }]) {
    const style = providers.get(route.provider)!.style;
    const can = STYLE_CAPABILITIES[style];
    for (const cap of CAPABILITIES) {
      if (model[cap] && !can.has(cap)) {
        throw f.get(cap).invalid(
          `provider "${route.provider}" (style ${style}) cannot serve ${cap}`,
        );
      }
    }
  }
  if (model.image_generation && !STYLE_CAPABILITIES[provider.style].has("image_generation")) {
    throw image.invalid(
      `provider "${providerId}" (style ${provider.style}) cannot generate images`,
    );
  }
  if (model.moderation_mode === "native" && model.moderation && provider.style === "anthropic") {
    throw f.get("moderation_mode").invalid(`style anthropic has no moderation API; use "guard"`);
  }
  if (model.default_moderation && !model.moderation) {
    throw f.get("default_moderation").invalid(
      "only a model with moderation: true can be the default",
    );
  }
  doneWithSuggestion(f, MODEL_FIELDS);
  if (
    !model.chat_completions && !model.moderation && !model.image_generation && !model.embeddings
  ) {
    throw r.invalid(
      `model "${id}" serves nothing: set chat_completions, moderation, image_generation or embeddings`,
    );
  }
  return model;
}

/** The per-minute and per-day limits of one scope (requests, and for `tokens` scopes tokens
 * too); absent ones keep `fallback`'s. */
function readWindow(r: Reader, fallback: WindowLimit, tokens: boolean): WindowLimit {
  const f = r.object(OPTIONAL);
  if (f === undefined) return fallback;
  const perMinute = f.integer("per_minute", NULLABLE_COUNT);
  const perDay = f.integer("per_day", NULLABLE_COUNT);
  const window: WindowLimit = {
    per_minute: perMinute === undefined ? fallback.per_minute : perMinute,
    per_day: perDay === undefined ? fallback.per_day : perDay,
  };
  if (tokens) {
    for (const name of ["tokens_per_minute", "tokens_per_day"] as const) {
      const value = f.integer(name, NULLABLE_COUNT);
      const inherited = fallback[name];
      if (value !== undefined) window[name] = value;
      else if (inherited !== undefined) window[name] = inherited;
    }
  }
  f.done();
  return window;
}

function readScopes(r: Reader, fallback: ScopeLimits): ScopeLimits {
  const f = r.object(OPTIONAL);
  if (f === undefined) return fallback;
  const out = {} as ScopeLimits;
  for (const scope of LIMIT_SCOPES) {
    out[scope] = readWindow(f.get(scope), fallback[scope], scope === "chat");
  }
  f.done();
  return out;
}

function readLimits(r: Reader): LimitsConfig {
  const f = r.object(OPTIONAL);
  if (f === undefined) return structuredClone(DEFAULT_LIMITS);
  const limits: LimitsConfig = {
    anonymous: readScopes(f.get("anonymous"), DEFAULT_LIMITS.anonymous),
    key: readScopes(f.get("key"), DEFAULT_LIMITS.key),
    max_image_pixels: f.integer("max_image_pixels", COUNT) ?? DEFAULT_LIMITS.max_image_pixels,
    max_image_bytes: f.integer("max_image_bytes", COUNT) ?? DEFAULT_LIMITS.max_image_bytes,
    max_request_image_pixels: f.integer("max_request_image_pixels", COUNT) ??
      DEFAULT_LIMITS.max_request_image_pixels,
    max_request_image_bytes: f.integer("max_request_image_bytes", COUNT) ??
      DEFAULT_LIMITS.max_request_image_bytes,
  };
  f.done();
  return structuredClone(limits);
}

function readLogs(r: Reader): LogsConfig {
  const f = orEmpty(r).object();
  const logs: LogsConfig = {
    retention_days: f.integer("retention_days", { optional: true, min: 1, max: 3650 }) ?? 7,
    include_content: f.boolean("include_content", OPTIONAL) ?? false,
    max_records_per_minute: f.integer("max_records_per_minute", COUNT) ?? 6_000,
  };
  f.done();
  return logs;
}

const SITE_TEXT = { optional: true, nonEmpty: true, maxLength: 1024 } as const;

function readSite(r: Reader): SiteConfig {
  const f = orEmpty(r).object();
  const site: SiteConfig = {
    name: f.string("name", OPTIONAL_TEXT) ?? "Switchyard",
    description: f.string("description", SITE_TEXT) ??
      "An OpenAI-compatible API in front of many models.",
    contact: f.string("contact", { ...SITE_TEXT, nullable: true }) ?? null,
  };
  f.done();
  return site;
}

function readMetrics(r: Reader): MetricsConfig {
  const f = orEmpty(r).object();
  const tokenEnv = f.string("token_env", { optional: true, nullable: true, ...TEXT });
  const metrics: MetricsConfig = {
    enabled: f.boolean("enabled", OPTIONAL) ?? true,
    token_env: tokenEnv === undefined ? "SWITCHYARD_METRICS_TOKEN" : tokenEnv,
  };
  f.done();
  return metrics;
}

function readProviders(r: Reader): Map<string, ProviderConfig> {
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

function readModels(r: Reader, providers: ReadonlyMap<string, ProviderConfig>): ModelConfig[] {
  const models: ModelConfig[] = [];
  const ids = new Map<string, number>();
  let defaultModeration = -1;
  (r.array({ optional: true, nullable: true }) ?? []).forEach((item, i) => {
    const model = readModel(item, providers);
    const first = ids.get(model.id);
    if (first !== undefined) {
      throw item.child("id", model.id).invalid(
        `duplicate model id ${quote(model.id)} (also models[${first}])`,
      );
    }
    if (model.default_moderation) {
      if (defaultModeration >= 0) {
        throw item.child("default_moderation", true).invalid(
          `only one model can be the default moderation model (also models[${defaultModeration}])`,
        );
      }
      defaultModeration = i;
    }
    ids.set(model.id, i);
    models.push(model);
  });
  return models;
}

function validate(raw: unknown): Config {
  const root = readJson(raw).object();
  const server = readServer(root.get("server"));
  const kv = orEmpty(root.get("kv")).object();
  const pathField = kv.get("path");
  const kvPath = pathField.value === undefined
    ? DEFAULT_KV_PATH
    : pathField.string({ nullable: true, nonEmpty: true, maxLength: 4096 });
  kv.done();
  const providers = readProviders(root.get("providers"));
  const config: Config = {
    server,
    kv: { path: kvPath },
    providers: [...providers.values()],
    models: readModels(root.get("models"), providers),
    limits: readLimits(root.get("limits")),
    logs: readLogs(root.get("logs")),
    site: readSite(root.get("site")),
    metrics: readMetrics(root.get("metrics")),
  };
  root.get("$schema"); // editors' hint; allowed, not used
  root.done();
  return config;
}

/** Validates a parsed config document; throws {@link ConfigError} naming `source` and the field. */
export function parseConfig(raw: unknown, source: string): Config {
  try {
    return validate(raw);
  } catch (e) {
    if (e instanceof ValidationError) throw new ConfigError(`${source}: ${e.fieldMessage()}`);
    throw e;
  }
}

/** Where the config comes from and what the environment overrides. */
export interface ConfigSource {
  args: readonly string[];
  env: (name: string) => string | undefined;
}

/** The config path named by `--config PATH`, `--config=PATH` or `SWITCHYARD_CONFIG`. */
export function configPath({ args, env }: ConfigSource): string {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--config") {
      const next = args[i + 1];
      if (!next) throw new ConfigError("--config needs a file path");
      return next;
    }
    if (arg.startsWith("--config=")) return arg.slice("--config=".length);
  }
  return env("SWITCHYARD_CONFIG") ?? "switchyard.json";
}

/** Reads, parses and validates the config file (or, with no `--config`, the document in
 * `SWITCHYARD_CONFIG_JSON` when set: env-only config, as on Deno Deploy), then applies `PORT`
 * and `SWITCHYARD_KV`. */
export async function loadConfig(source: ConfigSource): Promise<Config> {
  const inline = source.env("SWITCHYARD_CONFIG_JSON");
  const flagged = source.args.some((arg) => arg === "--config" || arg.startsWith("--config="));
  if (inline !== undefined && inline !== "" && !flagged) {
    return applyEnv(parseConfigText(inline, "SWITCHYARD_CONFIG_JSON"), source.env);
  }
  const path = configPath(source);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    const reason = e instanceof Deno.errors.NotFound
      ? "file not found"
      : isNotGranted(e)
      ? outsideGrants(path, "read")
      : e instanceof Deno.errors.PermissionDenied
      ? "permission denied"
      : e instanceof Deno.errors.IsADirectory
      ? "it is a directory, not a file"
      : e instanceof Error
      ? e.message
      : String(e);
    throw new ConfigError(`${path}: cannot read config: ${reason}`);
  }
  return applyEnv(parseConfigText(text, path), source.env, path);
}

/** Parses and validates a config document's text; `source` names it in errors. */
function parseConfigText(text: string, source: string): Config {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`${source}: invalid JSON: ${(e as Error).message}`);
  }
  return parseConfig(raw, source);
}

/** Applies the environment overrides `PORT` and `SWITCHYARD_KV`. */
export function applyEnv(
  config: Config,
  env: (name: string) => string | undefined,
  source = "environment",
): Config {
  const port = env("PORT");
  if (port !== undefined && port !== "") {
    const n = Number(port);
    if (!Number.isInteger(n) || n < 0 || n > 65535) {
      throw new ConfigError(
        `${source}: PORT: must be a port number 0\u201365535, not ${quote(port)}`,
      );
    }
    config.server.port = n;
  }
  const kv = env("SWITCHYARD_KV");
  if (kv !== undefined && kv !== "") config.kv.path = kv;
  return config;
}
