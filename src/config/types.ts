/**
 * The configuration's schema: the validated config's types, and the names it allows (provider
 * styles, access levels, limit scopes, moderation categories) with what each style can serve.
 */

/** Provider API styles that Switchyard can speak. */
export const PROVIDER_STYLES = [
  "openai",
  "anthropic",
  "gemini",
  "simulator",
  "azure",
  "vertex",
  "bedrock",
] as const;
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
  | "embeddings"
  | "rerank";

/** What each provider style can serve. Anthropic moderates through a guard prompt. */
export const STYLE_CAPABILITIES: Record<ProviderStyle, ReadonlySet<Capability>> = {
  simulator: new Set([
    "chat_completions",
    "moderation",
    "image_input",
    "function_calling",
    "image_generation",
    "embeddings",
    "rerank",
  ]),
  openai: new Set([
    "chat_completions",
    "moderation",
    "image_input",
    "function_calling",
    "image_generation",
    "embeddings",
    "rerank",
  ]),
  anthropic: new Set(["chat_completions", "moderation", "image_input", "function_calling"]),
  gemini: new Set(["chat_completions", "image_input", "function_calling", "embeddings"]),
  azure: new Set([
    "chat_completions",
    "image_input",
    "function_calling",
    "image_generation",
    "embeddings",
  ]),
  vertex: new Set(["chat_completions", "image_input", "function_calling", "embeddings"]),
  bedrock: new Set(["chat_completions", "image_input", "function_calling", "embeddings"]),
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

/** The rerank request bodies an OpenAI-style upstream may take (`rerank_format`). */
export const RERANK_FORMATS = ["cohere", "tei"] as const;
export type RerankFormat = typeof RERANK_FORMATS[number];

export interface ProviderConfig {
  id: string;
  style: ProviderStyle;
  base_url: string;
  /** Name of the environment variable that holds the API key; `null` for none. */
  api_key_env: string | null;
  /** Name of the environment variable that holds the PEM certificates (one or more) the
   * upstream's TLS certificate may chain to, besides the default roots; `null` for none. */
  ca_certs_env: string | null;
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
  /** OpenAI style only: where the upstream serves rerank, appended to `base_url` (default
   * `/rerank`), and the body it takes there: `cohere` (`documents`: Cohere v2, Jina, vLLM,
   * llama.cpp, Infinity) or `tei` (`texts`: Hugging Face's text-embeddings-inference). */
  rerank_path: string;
  rerank_format: RerankFormat;
  /** Bytes an upstream answer (a JSON body, or a whole stream) may have; past it the call ends
   * with 502 or an SSE error event. */
  max_response_bytes: number;
  /** Bytes one SSE event (or line) of an upstream stream may have. */
  max_event_bytes: number;
  /** Present when the provider has `discover: true`: how the models its upstream lists are
   * offered (src/catalogue/discovery.ts). */
  discovery?: DiscoveryConfig;
  /** Azure style only: how its deployments are called (docs/azure.md). */
  azure?: AzureConfig;
  /** Vertex style only: the Google Cloud project, region and service account (docs/vertex.md). */
  vertex?: VertexConfig;
  /** Present for the `bedrock` style: its region and where its AWS credentials are. */
  bedrock?: BedrockConfig;
}

/** A `bedrock` provider's region and the names of the environment variables that hold its AWS
 * credentials (`access_key_id_env`, `secret_access_key_env`, `session_token_env`), which sign
 * its requests unless its `api_key_env` names a Bedrock API key. */
export interface BedrockConfig {
  /** The AWS region (`us-east-1`): the default endpoint's, and the one requests are signed
   * for. */
  region: string;
  /** The control plane, where discovery lists the models (default
   * `https://bedrock.{region}.amazonaws.com`). */
  control_url: string;
  access_key_id_env: string;
  secret_access_key_env: string;
  /** A session token is needed with temporary credentials only: an unset variable is none. */
  session_token_env: string;
  /** Without access keys or a container's role: the EC2 instance's role, from the instance
   * metadata service (IMDSv2). */
  instance_role: boolean;
}

/** An `azure` provider's `api_version` and `bearer_token_env`. */
export interface AzureConfig {
  /** A dated version (`2024-10-21`, `2025-04-01-preview`): the deployments' paths
   * (`/openai/deployments/{deployment}/...?api-version=`); `v1` or `preview`: the v1 API
   * (`/openai/v1/...`, the deployment as the body's `model`). */
  api_version: string;
  /** The variable holding a Microsoft Entra ID token sent as `Authorization: Bearer`, instead of
   * an `api-key` from `api_key_env`; `null` for none. */
  bearer_token_env: string | null;
  /** An Entra ID app's tenant and application (client) ids, with `client_secret_env`. */
  tenant_id: string | null;
  client_id: string | null;
  /** The variable holding the app's client secret: tokens are fetched with it (the client
   * credentials grant) and renewed before they expire; `null` for none. */
  client_secret_env: string | null;
  /** Where tokens are fetched (Entra ID's for the tenant, unless set); `null` without
   * `client_secret_env`. */
  token_url: string | null;
  /** On Azure (VMs, App Service, Container Apps, AKS): the resource's managed identity's tokens
   * from the local identity endpoint, a user-assigned one's when `client_id` is given. */
  managed_identity: boolean;
}

/** A `vertex` provider's place in Google Cloud and its credentials. */
export interface VertexConfig {
  project: string;
  /** A region (`us-east5`) or `global`. */
  region: string;
  /** The variable holding the service account key: its JSON, or the path of its file; `null`
   * with {@link metadata_server}. */
  credentials_env: string | null;
  /** On Google Cloud (GKE with Workload Identity, Cloud Run, Compute Engine): the attached
   * service account's tokens from the metadata server instead of a key. */
  metadata_server: boolean;
  /** Where the signed assertion is exchanged for an access token. */
  token_url: string;
  /** The publisher of every model of the provider (whose protocol then passes through as
   * written), or `null`: each model's own, from its upstream name (`claude-*` is Anthropic's). */
  publisher: VertexPublisher | null;
}

/** The model publishers on Vertex AI that Switchyard speaks to. */
export const VERTEX_PUBLISHERS = ["google", "anthropic"] as const;
export type VertexPublisher = typeof VERTEX_PUBLISHERS[number];

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

/** A model's `rerank` (`true`, or an object of these fields): what `POST /v1/rerank` checks
 * before the call. */
export interface RerankConfig {
  /** Documents in one request, at most (default 1000). */
  max_documents: number;
  /** Tokens of the query and of each document, at most (default 8192), text counted at four
   * characters a token. */
  max_document_tokens: number;
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
  /** Served on `POST /v1/rerank`, with these settings; absent: not a rerank model (absent
   * rather than `null`, so that the entries of other models fingerprint as before). */
  rerank?: RerankConfig;
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
  /** What tools only one protocol's back end runs (Responses hosted tools, Messages server
   * tools, Gemini's built-in tools: `Uses.hostedTools`) do when the model's back end cannot run
   * them; absent: `drop`. */
  hosted_tools?: HostedTools;
  /** The checks of its chat calls' input and output (docs/guardrails.md), in order; absent:
   * none (absent rather than empty, so that other models' entries fingerprint as before). */
  guardrails?: GuardrailConfig[];
  /** The response cache for its chat calls (docs/caching.md); absent: none. */
  cache?: CacheConfig;
}

/** What a guardrail checks with (docs/guardrails.md). */
export const GUARDRAIL_TYPES = ["pii", "moderation", "deny", "webhook"] as const;
export type GuardrailType = typeof GUARDRAIL_TYPES[number];
/** Which side of a call a guardrail checks: the request, or the model's answer. */
export const GUARDRAIL_STAGES = ["input", "output"] as const;
export type GuardrailStage = typeof GUARDRAIL_STAGES[number];
/** What a guardrail does with what it finds. */
export const GUARDRAIL_ACTIONS = ["block", "redact", "log"] as const;
export type GuardrailAction = typeof GUARDRAIL_ACTIONS[number];
/** What a guardrail that cannot decide (its moderation model or webhook failed) does. */
export const GUARDRAIL_ON_ERROR = ["block", "allow"] as const;
/** The kinds of personal data and secrets the `pii` guardrail finds. */
export const PII_KINDS = [
  "email",
  "phone",
  "card",
  "iban",
  "ssn",
  "ip",
  "secret",
] as const;
export type PiiKind = typeof PII_KINDS[number];

/** One guardrail of a model's `guardrails`. */
export interface GuardrailConfig {
  type: GuardrailType;
  /** Names it in errors, logs and metrics (default: its type, with its place when the type
   * repeats: `deny_2`). */
  name: string;
  stage: GuardrailStage;
  action: GuardrailAction;
  on_error: "block" | "allow";
  /** pii: the kinds looked for (default all). */
  entities?: PiiKind[];
  /** pii, input, redact: the originals put back in the answer in place of the placeholders. */
  restore?: boolean;
  /** moderation: the moderation model (default: the default moderation model). */
  model?: string;
  /** moderation: score thresholds by category (absent: the model's own flags). */
  categories?: Partial<Record<ModerationCategory, number>>;
  /** deny: words and phrases matched whole, ignoring case. */
  words?: string[];
  /** deny: regular expressions (bounded: see config/guardrails.ts). */
  patterns?: string[];
  /** webhook: where the verdict is asked for. */
  url?: string;
  /** webhook: milliseconds the verdict may take (default 2000). */
  timeout_ms?: number;
  /** webhook: the environment variable holding a bearer token sent to it, if any. */
  token_env?: string;
}

/** A model's `cache`: the exact response cache's settings (docs/caching.md). */
export interface CacheConfig {
  /** Seconds an answer is kept. */
  ttl_seconds: number;
  /** The most seconds a request's `x-switchyard-cache-ttl` may ask for (default `ttl_seconds`). */
  max_ttl_seconds: number;
  /** Whether calls use the cache unless their key says otherwise (a key's `cache: true` turns
   * it on for a model with `enabled: false`). */
  enabled: boolean;
  /** Entries shared by every caller of the model under this name (anonymous ones too), instead
   * of one scope per key; `null`: per key, and anonymous calls are not cached. */
  namespace: string | null;
  /** Whether a hit's tokens count against token limits and budgets (default: a hit is free). */
  charge_hits: boolean;
  /** Whether refusals (`content_filter` answers, refusal parts) are stored too. */
  store_refusals: boolean;
  /** The largest answer stored, in bytes of its JSON. */
  max_entry_bytes: number;
  /** The semantic cache: a question like a stored one (by an embedding of its last user turn)
   * gets that one's answer; `null`: exact matches only. */
  semantic: SemanticCacheConfig | null;
}

/** A model cache's `semantic` settings (docs/caching.md#semantic-cache). */
export interface SemanticCacheConfig {
  /** The catalogue's embedding model the last user turn is embedded with. */
  model: string;
  /** The least cosine similarity of a hit (default 0.95). */
  threshold: number;
  /** Stored questions compared at most, of the same scope and conversation prefix (default
   * 100). */
  max_candidates: number;
}

/** The policies for hosted tools a back end cannot run: left out of the request (and named in
 * `x-switchyard-dropped-params`), or refused with a 400 `unsupported_capability`. */
export const HOSTED_TOOL_POLICIES = ["drop", "refuse"] as const;

/** A model's `hosted_tools` policy. */
export type HostedTools = (typeof HOSTED_TOOL_POLICIES)[number];

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
  /** Days the per-day usage, cache and guardrail counters are kept (`GET /admin/usage`). */
  usage_retention_days: number;
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

/** The Files and Batch APIs (`/v1/files`, `/v1/batches`; docs/batches.md). */
export interface BatchesConfig {
  /** Bytes an uploaded file may have. */
  max_file_bytes: number;
  /** Lines an uploaded batch input file may have. */
  max_lines: number;
  /** Days files (inputs, outputs, error files) and batches are kept. */
  file_retention_days: number;
  /** The share (0-1] of a key's request and token limits its batch lines may use: past it a
   * line waits for the window to pass, leaving the rest to the key's live traffic. */
  limit_share: number;
  /** Times a line is tried on upstream failures (429, 5xx) before it goes to the error file. */
  max_attempts: number;
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
  batches: BatchesConfig;
}
