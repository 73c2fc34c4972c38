/** The `providers` section: each upstream's style, address, key variable, limits and model
 * discovery. */
import { quote } from "../quote.ts";
import { type Fields, OPTIONAL, type Reader } from "../validation/reader.ts";
import { COUNT, OPTIONAL_TEXT, TEXT } from "./rules.ts";
import {
  ACCESS_LEVELS,
  type AzureConfig,
  type BedrockConfig,
  type DiscoveryConfig,
  PROVIDER_STYLES,
  type ProviderConfig,
  type ProviderStyle,
  RERANK_FORMATS,
  VERTEX_PUBLISHERS,
  type VertexConfig,
} from "./types.ts";

const DEFAULT_BASE_URL: Record<ProviderStyle, string> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
  gemini: "https://generativelanguage.googleapis.com",
  bedrock: "", // from the region, see readBedrock
  simulator: "",
  // Azure's is the operator's resource (required); Vertex's follows its region (vertexBaseUrl).
  azure: "",
  vertex: "",
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

/** Azure's `api_version`: a dated version, or `v1` / `preview` for its v1 API. */
const AZURE_API_VERSION = {
  maxLength: 64,
  pattern: /^(?:v1|preview|latest|\d{4}-\d{2}-\d{2}(?:-preview)?)$/,
  format: 'a dated version like "2024-10-21" or "2025-04-01-preview", or "v1" or "preview"',
} as const;

/** A Google Cloud project id (or number, or a domain-scoped `example.com:project`). */
const GCP_PROJECT = {
  maxLength: 128,
  pattern: /^[a-z0-9][a-z0-9.:-]*[a-z0-9]$/,
  format: "a Google Cloud project id: lowercase letters, digits and -",
} as const;

/** A Google Cloud region (`us-east5`, `europe-west1`) or `global`. */
const GCP_REGION = {
  maxLength: 64,
  pattern: /^(?:global|[a-z]+(?:-[a-z0-9]+)+)$/,
  format: 'a Google Cloud region like "us-east5", or "global"',
} as const;

/** Where Vertex AI serves `region` (the `global` endpoint has no region in its host). */
export function vertexBaseUrl(region: string): string {
  return region === "global"
    ? "https://aiplatform.googleapis.com"
    : `https://${region}-aiplatform.googleapis.com`;
}

/** An http(s) URL field, `fallback` when absent, without trailing slashes. */
function readUrl(f: Fields, name: string, fallback: string): string {
  const field = f.get(name);
  const url = field.string({ ...OPTIONAL_TEXT, maxLength: 2048 }) ?? fallback;
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw field.invalid(`expected an http(s) URL, but got ${quote(url)}`);
  }
  return url.replace(/\/+$/, "");
}

/** A Microsoft Entra ID tenant or application (client) id: a GUID, or a tenant's domain. */
const ENTRA_ID = {
  optional: true,
  maxLength: 256,
  pattern: /^[A-Za-z0-9][A-Za-z0-9.-]*$/,
  format:
    "a GUID like 00000000-0000-0000-0000-000000000000, or a domain like contoso.onmicrosoft.com",
} as const;

/** An `azure` provider's fields (`base_url` is its resource, so it is required). */
function readAzure(f: Fields, provider: ProviderConfig): AzureConfig {
  const bearer = f.get("bearer_token_env");
  const secret = f.get("client_secret_env");
  const azure: AzureConfig = {
    api_version: f.string("api_version", AZURE_API_VERSION),
    bearer_token_env: bearer.string(ENV_NAME) ?? null,
    tenant_id: f.string("tenant_id", ENTRA_ID) ?? null,
    client_id: f.string("client_id", ENTRA_ID) ?? null,
    client_secret_env: secret.string(ENV_NAME) ?? null,
    token_url: null,
    managed_identity: f.boolean("managed_identity", OPTIONAL) ?? false,
  };
  const ways = [
    provider.api_key_env !== null ? "api_key_env (an api-key)" : null,
    azure.bearer_token_env !== null ? "bearer_token_env (an Entra ID token)" : null,
    azure.client_secret_env !== null ? "client_secret_env (an Entra ID app's secret)" : null,
    azure.managed_identity ? "managed_identity (the resource's own identity)" : null,
  ].filter((way) => way !== null);
  if (ways.length > 1) {
    const field = azure.client_secret_env !== null
      ? secret
      : azure.managed_identity
      ? f.get("managed_identity")
      : bearer;
    throw field.invalid(`give one of ${ways.join(", ")}, not several`);
  }
  const entra = ["tenant_id", "client_id", "token_url"] as const;
  if (azure.managed_identity) {
    // A user-assigned identity is named by its client id; tenant and token endpoint are the
    // identity endpoint's.
    const stray = (["tenant_id", "token_url"] as const).find((name) => f.has(name));
    if (stray) throw f.get(stray).invalid("a managed identity's tokens come from Azure itself");
    return azure;
  }
  if (azure.client_secret_env === null) {
    const stray = entra.find((name) => f.has(name));
    if (stray) throw f.get(stray).invalid("only a provider with client_secret_env uses it");
    return azure;
  }
  for (const name of ["tenant_id", "client_id"] as const) {
    if (azure[name] === null) {
      throw f.get(name).invalid(
        "required with client_secret_env: the Entra ID app's tenant and application (client) ids",
      );
    }
  }
  azure.token_url = readUrl(
    f,
    "token_url",
    `https://login.microsoftonline.com/${azure.tenant_id}/oauth2/v2.0/token`,
  );
  return azure;
}

/** A `vertex` provider's fields. */
function readVertex(f: Fields): VertexConfig {
  if (f.has("api_key_env")) {
    throw f.get("api_key_env").invalid(
      "a vertex provider authenticates with a service account; name its variable in credentials_env",
    );
  }
  const metadataServer = f.boolean("metadata_server", OPTIONAL) ?? false;
  const credentials =
    f.string("credentials_env", { ...ENV_NAME, optional: true, nullable: true }) ?? null;
  if (metadataServer && credentials !== null) {
    throw f.get("metadata_server").invalid(
      "a vertex provider takes its service account from credentials_env or from the metadata server, not both",
    );
  }
  if (!metadataServer && credentials === null) {
    throw f.get("credentials_env").invalid(
      "required: the variable holding the service account's key (or, on Google Cloud, metadata_server: true for the service account attached to the workload)",
    );
  }
  return {
    project: f.string("project", GCP_PROJECT),
    region: f.string("region", GCP_REGION),
    credentials_env: credentials,
    metadata_server: metadataServer,
    token_url: readUrl(f, "token_url", "https://oauth2.googleapis.com/token"),
    publisher: f.oneOf("publisher", VERTEX_PUBLISHERS, OPTIONAL) ?? null,
  };
}

/** The styles whose upstream lists its models (`discover: true`). */
const DISCOVERING_STYLES: ReadonlySet<ProviderStyle> = new Set([
  "openai",
  "anthropic",
  "gemini",
  "bedrock",
]);
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
      `style ${style} has no model list to read; discover works with openai, anthropic, gemini and bedrock`,
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

/** An AWS region name: `us-east-1`, `eu-central-1`, `us-gov-west-1`. */
const AWS_REGION = {
  maxLength: 64,
  pattern: /^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$/,
  format: "an AWS region like us-east-1",
} as const;

/** A `bedrock` provider's `region` and the variables its AWS credentials are read from
 * (default the AWS SDKs' `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`);
 * unused when `api_key_env` names a Bedrock API key. */
function readBedrock(f: Fields): BedrockConfig {
  const name = { ...ENV_NAME, nullable: false } as const;
  const region = f.string("region", AWS_REGION);
  return {
    region,
    control_url: readUrl(f, "control_url", `https://bedrock.${region}.amazonaws.com`),
    access_key_id_env: f.string("access_key_id_env", name) ?? "AWS_ACCESS_KEY_ID",
    secret_access_key_env: f.string("secret_access_key_env", name) ?? "AWS_SECRET_ACCESS_KEY",
    session_token_env: f.string("session_token_env", name) ?? "AWS_SESSION_TOKEN",
    instance_role: f.boolean("instance_role", OPTIONAL) ?? false,
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
    responses_api: style === "openai" || style === "azure"
      ? f.boolean("responses_api", OPTIONAL) ?? false
      : false,
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
  if (style === "bedrock") provider.bedrock = readBedrock(f);
  if (remote) {
    if (style === "azure" && f.get("base_url").value === undefined) {
      throw f.get("base_url").invalid(
        'required: an azure provider needs its resource\'s endpoint, like "https://<resource>.openai.azure.com"',
      );
    }
    const vertex = style === "vertex" ? readVertex(f) : undefined;
    if (vertex) provider.vertex = vertex;
    const url = readUrl(
      f,
      "base_url",
      vertex
        ? vertexBaseUrl(vertex.region)
        : provider.bedrock
        ? `https://bedrock-runtime.${provider.bedrock.region}.amazonaws.com`
        : DEFAULT_BASE_URL[style],
    );
    provider.base_url = url;
    provider.api_key_env =
      f.string("api_key_env", { optional: true, nullable: true, nonEmpty: true }) ??
        null;
    const caCerts = f.get("ca_certs_env");
    provider.ca_certs_env = caCerts.string(ENV_NAME) ?? null;
    if (provider.ca_certs_env !== null && new URL(url).protocol !== "https:") {
      throw caCerts.invalid("only a provider with an https base_url uses it");
    }
    if (style === "azure") provider.azure = readAzure(f, provider);
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
