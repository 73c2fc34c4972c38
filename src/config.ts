import { quote } from "./quote.ts";

/** Provider API styles that Switchyard can speak. */
export const PROVIDER_STYLES = ["openai", "anthropic", "simulator"] as const;
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
  | "image_generation";

/** What each provider style can serve. Anthropic moderates through a guard prompt. */
export const STYLE_CAPABILITIES: Record<ProviderStyle, ReadonlySet<Capability>> = {
  simulator: new Set([
    "chat_completions",
    "moderation",
    "image_input",
    "function_calling",
    "image_generation",
  ]),
  openai: new Set([
    "chat_completions",
    "moderation",
    "image_input",
    "function_calling",
    "image_generation",
  ]),
  anthropic: new Set(["chat_completions", "moderation", "image_input", "function_calling"]),
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
  /** Bytes an upstream answer (a JSON body, or a whole stream) may have; past it the call ends
   * with 502 or an SSE error event. */
  max_response_bytes: number;
  /** Bytes one SSE event (or line) of an upstream stream may have. */
  max_event_bytes: number;
}

export interface ImageGenerationConfig {
  sizes: string[];
  max_n: number;
  guidance_scale: boolean;
  num_inference_steps: boolean;
}

export interface ModelConfig {
  id: string;
  provider: string;
  upstream_model: string;
  owned_by: string;
  /** Unix seconds; `null` means "when first registered in KV". */
  created: number | null;
  chat_completions: boolean;
  moderation: boolean;
  image_input: boolean;
  function_calling: boolean;
  image_generation: ImageGenerationConfig | null;
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
}

export interface WindowLimit {
  per_minute: number | null;
  per_day: number | null;
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

/** The whole, validated configuration with every default filled in. */
export interface Config {
  server: ServerConfig;
  kv: { path: string | null };
  providers: ProviderConfig[];
  models: ModelConfig[];
  limits: LimitsConfig;
  logs: LogsConfig;
}

/** A configuration error; the message names the file and the field path. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

type Json = unknown;
type Obj = Record<string, Json>;

/** A validation error at a field path (`models[2].provider`); callers add the source. */
export class FieldError extends Error {
  constructor(readonly path: string, message: string) {
    super(message);
  }
}

/** A short description of a JSON value for error messages. */
export function describe(value: Json): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${quote(value)}`;
  if (typeof value === "object") return "an object";
  return `${typeof value} ${quote(value)}`;
}

function isObject(value: Json): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function join(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return path === "" ? key : `${path}.${key}`;
}

/** Items of a string array at most. */
const MAX_STRINGS = 64;

/** Reads one JSON object field by field, rejecting unknown keys. */
export class Fields {
  readonly #seen = new Set<string>();
  constructor(readonly obj: Obj, readonly path: string) {}

  static of(value: Json, path: string): Fields {
    if (!isObject(value)) {
      throw new FieldError(path || "(root)", `must be an object, not ${describe(value)}`);
    }
    return new Fields(value, path);
  }

  at(key: string): string {
    return join(this.path, key);
  }

  raw(key: string): Json {
    this.#seen.add(key);
    return this.obj[key];
  }

  has(key: string): boolean {
    return this.obj[key] !== undefined;
  }

  /** A non-empty string of at most `maxLength` characters (a record must fit a KV value). */
  string(key: string, fallback?: string, maxLength = 256): string {
    const v = this.raw(key);
    if (v === undefined && fallback !== undefined) return fallback;
    if (typeof v !== "string" || v === "") {
      throw new FieldError(
        this.at(key),
        v === undefined ? "is required" : `must be a non-empty string, not ${describe(v)}`,
      );
    }
    if (v.length > maxLength) {
      throw new FieldError(
        this.at(key),
        `must be at most ${maxLength} characters, not ${v.length}`,
      );
    }
    return v;
  }

  nullableString(key: string, fallback: string | null): string | null {
    const v = this.raw(key);
    if (v === undefined) return fallback;
    if (v === null) return null;
    if (typeof v !== "string" || v === "") {
      throw new FieldError(this.at(key), `must be a non-empty string or null, not ${describe(v)}`);
    }
    return v;
  }

  bool(key: string, fallback: boolean): boolean {
    const v = this.raw(key);
    if (v === undefined) return fallback;
    if (typeof v !== "boolean") {
      throw new FieldError(this.at(key), `must be true or false, not ${describe(v)}`);
    }
    return v;
  }

  int(key: string, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): number {
    const v = this.raw(key);
    if (v === undefined) return fallback;
    return checkInt(v, this.at(key), min, max);
  }

  nullableInt(key: string, fallback: number | null, min = 1): number | null {
    const v = this.raw(key);
    if (v === undefined) return fallback;
    if (v === null) return null;
    return checkInt(v, this.at(key), min, Number.MAX_SAFE_INTEGER);
  }

  oneOf<T extends string>(key: string, allowed: readonly T[], fallback?: T): T {
    const v = this.raw(key);
    if (v === undefined && fallback !== undefined) return fallback;
    if (typeof v !== "string" || !allowed.includes(v as T)) {
      const what = v === undefined ? "is required" : `unknown value ${quote(v)}`;
      throw new FieldError(
        this.at(key),
        `${what}; expected one of ${allowed.map((a) => `"${a}"`).join(", ")}`,
      );
    }
    return v as T;
  }

  /** An array of at most 64 non-empty strings of at most 256 characters each. */
  strings(key: string, fallback: string[]): string[] {
    const v = this.raw(key);
    if (v === undefined) return fallback;
    if (!Array.isArray(v)) {
      throw new FieldError(this.at(key), `must be an array of strings, not ${describe(v)}`);
    }
    if (v.length > MAX_STRINGS) {
      throw new FieldError(this.at(key), `must have at most ${MAX_STRINGS} items, not ${v.length}`);
    }
    return v.map((item, i) => {
      if (typeof item !== "string" || item === "" || item.length > 256) {
        throw new FieldError(
          join(this.at(key), i),
          `must be a non-empty string of at most 256 characters, not ${describe(item)}`,
        );
      }
      return item;
    });
  }

  /** Throws on any key that was never read: a typo in the config. */
  done(): void {
    for (const key of Object.keys(this.obj)) {
      if (!this.#seen.has(key)) throw new FieldError(this.at(key), "unknown field");
    }
  }
}

function checkInt(v: Json, path: string, min: number, max: number): number {
  if (typeof v !== "number" || !Number.isInteger(v)) {
    throw new FieldError(path, `must be an integer, not ${describe(v)}`);
  }
  if (v < min) {
    throw new FieldError(
      path,
      min === 1 ? `must be positive, not ${v}` : `must be at least ${min}, not ${v}`,
    );
  }
  if (v > max) throw new FieldError(path, `must be at most ${max}, not ${v}`);
  return v;
}

const SIZE_PATTERN = /^([1-9][0-9]{1,4})x([1-9][0-9]{1,4})$/;

/** Parses `WIDTHxHEIGHT`; `null` when malformed or outside 16–8192 pixels a side. */
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

function readServer(value: Json): ServerConfig {
  const f = Fields.of(value ?? {}, "server");
  const trust = f.raw("trust_proxy");
  let trustProxy = 0;
  if (trust === true) trustProxy = 1;
  else if (trust === undefined || trust === false) trustProxy = 0;
  else trustProxy = checkInt(trust, f.at("trust_proxy"), 1, 32);
  const server: ServerConfig = {
    hostname: f.string("hostname", "0.0.0.0"),
    port: f.int("port", 8000, 0, 65535),
    trust_proxy: trustProxy,
    max_body_bytes: f.int("max_body_bytes", 20 * 1024 * 1024),
    cors_origins: f.strings("cors_origins", ["*"]),
    shutdown_grace_seconds: f.int("shutdown_grace_seconds", 10, 0),
    body_timeout_ms: f.int("body_timeout_ms", 30_000, 100, 3_600_000),
  };
  server.cors_origins.forEach((origin, i) => {
    if (origin !== "*" && !/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new FieldError(
        join(f.at("cors_origins"), i),
        `must be "*" or an origin like "https://app.example.com", not ${quote(origin)}`,
      );
    }
  });
  f.done();
  return server;
}

const DEFAULT_BASE_URL: Record<ProviderStyle, string> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
  simulator: "",
};

function readProvider(value: Json, path: string): ProviderConfig {
  const f = Fields.of(value, path);
  const id = f.string("id");
  const style = f.oneOf("style", PROVIDER_STYLES);
  const remote = style !== "simulator";
  const provider: ProviderConfig = {
    id,
    style,
    base_url: remote ? f.string("base_url", DEFAULT_BASE_URL[style], 2048) : "",
    api_key_env: remote ? f.nullableString("api_key_env", null) : null,
    timeout_ms: f.int("timeout_ms", 120_000),
    max_retries: f.int("max_retries", 2, 0, 10),
    headers: {},
    token_delay_ms: style === "simulator" ? f.int("token_delay_ms", 0, 0, 60_000) : 0,
    anthropic_version: style === "anthropic"
      ? f.string("anthropic_version", "2023-06-01")
      : "2023-06-01",
    max_response_bytes: f.int("max_response_bytes", 64 * 1024 * 1024, 1024),
    max_event_bytes: f.int("max_event_bytes", 8 * 1024 * 1024, 1024),
  };
  if (remote) {
    let url: URL | undefined;
    try {
      url = new URL(provider.base_url);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
      throw new FieldError(
        f.at("base_url"),
        `must be an http(s) URL, not ${quote(provider.base_url)}`,
      );
    }
    provider.base_url = provider.base_url.replace(/\/+$/, "");
    const headers = f.raw("headers");
    if (headers !== undefined) {
      const h = Fields.of(headers, f.at("headers"));
      for (const name of Object.keys(h.obj)) provider.headers[name] = h.string(name);
      h.done();
    }
  }
  f.done();
  return provider;
}

function readImageGeneration(value: Json, path: string): ImageGenerationConfig {
  const f = Fields.of(value, path);
  const sizes = f.strings("sizes", ["1024x1024"]);
  if (sizes.length === 0) throw new FieldError(f.at("sizes"), "must list at least one size");
  sizes.forEach((size, i) => {
    if (!parseSize(size)) {
      throw new FieldError(
        join(f.at("sizes"), i),
        `malformed size ${
          quote(size)
        }; expected WIDTHxHEIGHT with 16–8192 pixels a side, like "1024x1024"`,
      );
    }
  });
  const image: ImageGenerationConfig = {
    sizes,
    max_n: f.int("max_n", 1, 1, 10),
    guidance_scale: f.bool("guidance_scale", false),
    num_inference_steps: f.bool("num_inference_steps", false),
  };
  f.done();
  return image;
}

function readThresholds(value: Json, path: string): Partial<Record<ModerationCategory, number>> {
  if (value === undefined) return {};
  const f = Fields.of(value, path);
  const out: Partial<Record<ModerationCategory, number>> = {};
  for (const [key, v] of Object.entries(f.obj)) {
    if (!(MODERATION_CATEGORIES as readonly string[]).includes(key)) {
      throw new FieldError(f.at(key), "unknown moderation category");
    }
    if (typeof v !== "number" || !(v >= 0 && v <= 1)) {
      throw new FieldError(f.at(key), `must be a number from 0 to 1, not ${describe(v)}`);
    }
    out[key as ModerationCategory] = v;
  }
  return out;
}

/** Validates one model entry; `providers` resolves its provider id. */
export function readModel(
  value: Json,
  path: string,
  providers: ReadonlyMap<string, ProviderConfig>,
): ModelConfig {
  const f = Fields.of(value, path);
  const id = f.string("id");
  if (!/^[A-Za-z0-9][A-Za-z0-9._:\/-]{0,127}$/.test(id)) {
    throw new FieldError(
      f.at("id"),
      `invalid model id ${quote(id)}: use letters, digits and . _ : / - (at most 128)`,
    );
  }
  const providerId = f.string("provider");
  const provider = providers.get(providerId);
  if (!provider) {
    const known = [...providers.keys()].map((p) => `"${p}"`).join(", ");
    throw new FieldError(
      f.at("provider"),
      `unknown provider ${quote(providerId)} (known: ${known})`,
    );
  }
  const imageRaw = f.raw("image_generation");
  const model: ModelConfig = {
    id,
    provider: providerId,
    upstream_model: f.string("upstream_model", id),
    owned_by: f.string("owned_by", providerId),
    created: f.nullableInt("created", null),
    chat_completions: f.bool("chat_completions", false),
    moderation: f.bool("moderation", false),
    image_input: f.bool("image_input", false),
    function_calling: f.bool("function_calling", false),
    image_generation: imageRaw === undefined || imageRaw === null || imageRaw === false
      ? null
      : readImageGeneration(imageRaw === true ? {} : imageRaw, f.at("image_generation")),
    access: f.oneOf("access", ACCESS_LEVELS, "public"),
    featured: f.bool("featured", false),
    labels: f.strings("labels", []),
    context_length: f.nullableInt("context_length", null),
    default_max_tokens: f.nullableInt("default_max_tokens", null),
    default_moderation: f.bool("default_moderation", false),
    moderation_mode: f.oneOf(
      "moderation_mode",
      ["native", "guard"] as const,
      provider.style === "anthropic" ? "guard" : "native",
    ),
    moderation_thresholds: readThresholds(
      f.raw("moderation_thresholds"),
      f.at("moderation_thresholds"),
    ),
    enabled: f.bool("enabled", true),
  };
  const can = STYLE_CAPABILITIES[provider.style];
  for (
    const cap of ["chat_completions", "moderation", "image_input", "function_calling"] as const
  ) {
    if (model[cap] && !can.has(cap)) {
      throw new FieldError(
        f.at(cap),
        `provider "${providerId}" (style ${provider.style}) cannot serve ${cap}`,
      );
    }
  }
  if (model.image_generation && !can.has("image_generation")) {
    throw new FieldError(
      f.at("image_generation"),
      `provider "${providerId}" (style ${provider.style}) cannot generate images`,
    );
  }
  if (model.moderation_mode === "native" && model.moderation && provider.style === "anthropic") {
    throw new FieldError(
      f.at("moderation_mode"),
      `style anthropic has no moderation API; use "guard"`,
    );
  }
  if (model.default_moderation && !model.moderation) {
    throw new FieldError(
      f.at("default_moderation"),
      "only a model with moderation: true can be the default",
    );
  }
  if (!model.chat_completions && !model.moderation && !model.image_generation) {
    throw new FieldError(
      path,
      `model "${id}" serves nothing: set chat_completions, moderation or image_generation`,
    );
  }
  f.done();
  return model;
}

function readWindow(value: Json, path: string, fallback: WindowLimit): WindowLimit {
  if (value === undefined) return fallback;
  const f = Fields.of(value, path);
  const window: WindowLimit = {
    per_minute: f.nullableInt("per_minute", fallback.per_minute),
    per_day: f.nullableInt("per_day", fallback.per_day),
  };
  f.done();
  return window;
}

function readScopes(value: Json, path: string, fallback: ScopeLimits): ScopeLimits {
  if (value === undefined) return fallback;
  const f = Fields.of(value, path);
  const out = {} as ScopeLimits;
  for (const scope of LIMIT_SCOPES) {
    out[scope] = readWindow(f.raw(scope), f.at(scope), fallback[scope]);
  }
  f.done();
  return out;
}

function readLimits(value: Json): LimitsConfig {
  if (value === undefined) return structuredClone(DEFAULT_LIMITS);
  const f = Fields.of(value, "limits");
  const limits: LimitsConfig = {
    anonymous: readScopes(f.raw("anonymous"), f.at("anonymous"), DEFAULT_LIMITS.anonymous),
    key: readScopes(f.raw("key"), f.at("key"), DEFAULT_LIMITS.key),
    max_image_pixels: f.int("max_image_pixels", DEFAULT_LIMITS.max_image_pixels),
    max_image_bytes: f.int("max_image_bytes", DEFAULT_LIMITS.max_image_bytes),
    max_request_image_pixels: f.int(
      "max_request_image_pixels",
      DEFAULT_LIMITS.max_request_image_pixels,
    ),
    max_request_image_bytes: f.int(
      "max_request_image_bytes",
      DEFAULT_LIMITS.max_request_image_bytes,
    ),
  };
  f.done();
  return structuredClone(limits);
}

function readLogs(value: Json): LogsConfig {
  const f = Fields.of(value ?? {}, "logs");
  const logs: LogsConfig = {
    retention_days: f.int("retention_days", 7, 1, 3650),
    include_content: f.bool("include_content", false),
    max_records_per_minute: f.int("max_records_per_minute", 6_000),
  };
  f.done();
  return logs;
}

function validate(raw: Json): Config {
  const root = Fields.of(raw, "");
  const server = readServer(root.raw("server"));
  const kvField = Fields.of(root.raw("kv") ?? {}, "kv");
  const kv = { path: kvField.nullableString("path", null) };
  kvField.done();

  const providersRaw = root.raw("providers");
  if (!Array.isArray(providersRaw) || providersRaw.length === 0) {
    throw new FieldError("providers", "must be a non-empty array");
  }
  const providers = new Map<string, ProviderConfig>();
  providersRaw.forEach((p, i) => {
    const provider = readProvider(p, `providers[${i}]`);
    if (providers.has(provider.id)) {
      throw new FieldError(
        `providers[${i}].id`,
        `duplicate provider id ${quote(provider.id)}`,
      );
    }
    providers.set(provider.id, provider);
  });

  const modelsRaw = root.raw("models") ?? [];
  if (!Array.isArray(modelsRaw)) throw new FieldError("models", "must be an array");
  const models: ModelConfig[] = [];
  const ids = new Map<string, number>();
  let defaultModeration = -1;
  modelsRaw.forEach((m, i) => {
    const model = readModel(m, `models[${i}]`, providers);
    const first = ids.get(model.id);
    if (first !== undefined) {
      throw new FieldError(
        `models[${i}].id`,
        `duplicate model id ${quote(model.id)} (also models[${first}])`,
      );
    }
    if (model.default_moderation) {
      if (defaultModeration >= 0) {
        throw new FieldError(
          `models[${i}].default_moderation`,
          `only one model can be the default moderation model (also models[${defaultModeration}])`,
        );
      }
      defaultModeration = i;
    }
    ids.set(model.id, i);
    models.push(model);
  });

  const config: Config = {
    server,
    kv,
    providers: [...providers.values()],
    models,
    limits: readLimits(root.raw("limits")),
    logs: readLogs(root.raw("logs")),
  };
  root.raw("$schema");
  root.done();
  return config;
}

/** Validates a parsed config document; throws {@link ConfigError} naming `source` and the field. */
export function parseConfig(raw: unknown, source: string): Config {
  try {
    return validate(raw);
  } catch (e) {
    if (e instanceof FieldError) throw new ConfigError(`${source}: ${e.path}: ${e.message}`);
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

/** Reads, parses and validates the config file, then applies `PORT` and `SWITCHYARD_KV`. */
export async function loadConfig(source: ConfigSource): Promise<Config> {
  const path = configPath(source);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    const reason = e instanceof Deno.errors.NotFound ? "file not found" : String(e);
    throw new ConfigError(`${path}: cannot read config: ${reason}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`${path}: invalid JSON: ${(e as Error).message}`);
  }
  const config = parseConfig(raw, path);
  return applyEnv(config, source.env, path);
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
        `${source}: PORT: must be a port number 0–65535, not ${quote(port)}`,
      );
    }
    config.server.port = n;
  }
  const kv = env("SWITCHYARD_KV");
  if (kv !== undefined && kv !== "") config.kv.path = kv;
  return config;
}
