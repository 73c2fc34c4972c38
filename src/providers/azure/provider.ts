/**
 * The `azure` style: Azure OpenAI's deployments, which speak OpenAI's wire format (the OpenAI
 * adapter's translators, unchanged) at other URLs (url.ts) with an `api-key` header, or a
 * Microsoft Entra ID token as `Authorization: Bearer`: one from the environment
 * (`bearer_token_env`), or an app's, fetched with its client secret and renewed
 * (`client_secret_env`).
 */
import type { AzureConfig } from "../../config/types.ts";
import { OpenAIProvider } from "../openai/provider.ts";
import type { Provider, ProviderDeps } from "../types.ts";
import { credentialsRefused } from "../upstream/error_mapping.ts";
import { exchangeDeps, GrantError, OAuthTokens } from "../upstream/oauth_tokens.ts";
import { readTokenFile, TokenFileError } from "../upstream/token_file.ts";
import type { RetryTiming } from "../upstream/retry.ts";
import { parseAzureError } from "./errors.ts";
import { azureUrl, isAzureV1 } from "./url.ts";

/** The first dated API version with `max_completion_tokens` (2024-09-01-preview). */
const MAX_COMPLETION_TOKENS_SINCE = "2024-09-01";

/** What Entra ID tokens for Azure OpenAI are asked for. */
const COGNITIVE_SERVICES_SCOPE = "https://cognitiveservices.azure.com/.default";
/** The same, as a managed identity's token endpoint names it. */
const COGNITIVE_SERVICES_RESOURCE = "https://cognitiveservices.azure.com";

/** The adapter for an `azure` provider. */
export function azureProvider(deps: ProviderDeps, timing: RetryTiming = {}): Provider {
  const { base_url: baseUrl, azure } = deps.config;
  if (azure === undefined) throw new Error(`provider ${deps.config.id} is not an azure provider`);
  const headers: Record<string, string> = {};
  const app = azure.client_secret_env !== null;
  if (deps.apiKey && !app) {
    if (azure.bearer_token_env !== null) headers.authorization = `Bearer ${deps.apiKey}`;
    else headers["api-key"] = deps.apiKey;
  }
  const version = azure.api_version;
  const modern = isAzureV1(version) || version >= MAX_COMPLETION_TOKENS_SINCE;
  return new OpenAIProvider(app ? { ...deps, apiKey: null } : deps, timing, {
    style: {
      headers,
      parseError: parseAzureError,
      mapError: (status) =>
        status === 401 || status === 403
          ? credentialsRefused(deps.config.id, status, azureCredential(azure))
          : null,
      url: (request) => azureUrl(baseUrl, version, request),
      ...(app
        ? { credentials: appTokens(deps, azure, timing) }
        : azure.managed_identity
        ? { credentials: managedIdentityTokens(deps, azure, timing) }
        : {}),
    },
    maxTokensField: modern ? "max_completion_tokens" : "max_tokens",
  });
}

/** The managed identity's tokens, from the endpoint the resource the gateway runs on has: App
 * Service, Functions and Container Apps name it in `IDENTITY_ENDPOINT` (with the secret
 * `IDENTITY_HEADER`); VMs, scale sets and AKS nodes serve it at the instance metadata address
 * (`AZURE_POD_IDENTITY_AUTHORITY_HOST` moves it, as Azure's SDKs read it). */
function managedIdentityTokens(
  deps: ProviderDeps,
  azure: AzureConfig,
  timing: RetryTiming,
): OAuthTokens {
  const env = deps.env ?? (() => undefined);
  const federated = workloadIdentity(env, azure);
  if (federated !== null) return workloadIdentityTokens(deps, federated, timing);
  const endpoint = env("IDENTITY_ENDPOINT");
  const secret = env("IDENTITY_HEADER");
  const query = new URLSearchParams({
    "api-version": endpoint && secret ? "2019-08-01" : "2018-02-01",
    resource: COGNITIVE_SERVICES_RESOURCE,
  });
  if (azure.client_id !== null) query.set("client_id", azure.client_id);
  const [tokenUrl, headers] = endpoint && secret
    ? [`${endpoint}?${query}`, { "x-identity-header": secret }]
    : [
      `${
        (env("AZURE_POD_IDENTITY_AUTHORITY_HOST") || "http://169.254.169.254").replace(/\/+$/, "")
      }/metadata/identity/oauth2/token?${query}`,
      { metadata: "true" },
    ];
  return new OAuthTokens({
    ...exchangeDeps(deps, timing),
    tokenUrl,
    request: () => Promise.resolve({ headers }),
    credentials: { what: "its managed identity", check: "managed_identity" },
  });
}

/** A pod's federated identity: its token file, the tenant's token endpoint, the client id. */
interface FederatedIdentity {
  tokenFile: string;
  tokenUrl: string;
  clientId: string;
}

/** What AKS's Workload Identity gives a pod (`AZURE_FEDERATED_TOKEN_FILE`, `AZURE_TENANT_ID`,
 * `AZURE_CLIENT_ID`, `AZURE_AUTHORITY_HOST`), or `null` off AKS; the config's `client_id` wins
 * over the variable's. */
function workloadIdentity(
  env: (name: string) => string | undefined,
  azure: AzureConfig,
): FederatedIdentity | null {
  const tokenFile = env("AZURE_FEDERATED_TOKEN_FILE");
  const tenant = env("AZURE_TENANT_ID");
  const clientId = azure.client_id ?? env("AZURE_CLIENT_ID");
  if (!tokenFile || !tenant || !clientId) return null;
  const authority = (env("AZURE_AUTHORITY_HOST") || "https://login.microsoftonline.com/")
    .replace(/\/*$/, "/");
  return {
    tokenFile,
    tokenUrl: `${authority}${encodeURIComponent(tenant)}/oauth2/v2.0/token`,
    clientId,
  };
}

/** Workload Identity's tokens: the client credentials grant with the pod's service account token
 * as the client assertion, the file read again for every exchange (Kubernetes rotates it). */
function workloadIdentityTokens(
  deps: ProviderDeps,
  federated: FederatedIdentity,
  timing: RetryTiming,
): OAuthTokens {
  return new OAuthTokens({
    ...exchangeDeps(deps, timing),
    tokenUrl: federated.tokenUrl,
    request: async () => {
      let assertion: string;
      try {
        assertion = await readTokenFile(federated.tokenFile);
      } catch (e) {
        throw e instanceof TokenFileError ? new GrantError(e.message) : e;
      }
      const form = new URLSearchParams({
        grant_type: "client_credentials",
        client_id: federated.clientId,
        scope: COGNITIVE_SERVICES_SCOPE,
        client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        client_assertion: assertion,
      });
      return { form: form.toString() };
    },
    credentials: {
      what: "its workload identity",
      check: "the pod's federated identity (AZURE_CLIENT_ID, AZURE_TENANT_ID)",
    },
  });
}

/** An Entra ID app's tokens (the client credentials grant), renewed before they expire. */
function appTokens(deps: ProviderDeps, azure: AzureConfig, timing: RetryTiming): OAuthTokens {
  const form = new URLSearchParams({
    grant_type: "client_credentials",
    client_id: azure.client_id ?? "",
    client_secret: deps.apiKey ?? "",
    scope: COGNITIVE_SERVICES_SCOPE,
  }).toString();
  return new OAuthTokens({
    ...exchangeDeps(deps, timing),
    tokenUrl: azure.token_url ?? "",
    request: () => Promise.resolve({ form }),
    credentials: { what: "its Entra ID app", check: "tenant_id, client_id and client_secret_env" },
  });
}

/** What an operator checks when Azure refuses the gateway's credentials. */
function azureCredential(azure: AzureConfig): string {
  const role = "its identity needs the Cognitive Services OpenAI User role";
  if (azure.managed_identity) {
    return `its managed identity (managed_identity${
      azure.client_id !== null ? ", client_id" : ""
    }): ${role}`;
  }
  return azure.client_secret_env !== null
    ? `its Microsoft Entra ID app (tenant_id, client_id, client_secret_env): ${role}`
    : azure.bearer_token_env !== null
    ? `its Microsoft Entra ID token (bearer_token_env): the gateway reads it at start and does not renew it (client_secret_env does), and ${role}`
    : "its API key (api_key_env)";
}
