/**
 * The `azure` style: Azure OpenAI's deployments, which speak OpenAI's wire format (the OpenAI
 * adapter's translators, unchanged) at other URLs (url.ts) with an `api-key` header, or a
 * Microsoft Entra ID token as `Authorization: Bearer` (`bearer_token_env`).
 */
import { OpenAIProvider } from "../openai/provider.ts";
import type { Provider, ProviderDeps } from "../types.ts";
import { credentialsRefused } from "../upstream/error_mapping.ts";
import type { RetryTiming } from "../upstream/retry.ts";
import { parseAzureError } from "./errors.ts";
import { azureUrl, isAzureV1 } from "./url.ts";

/** The first dated API version with `max_completion_tokens` (2024-09-01-preview). */
const MAX_COMPLETION_TOKENS_SINCE = "2024-09-01";

/** The adapter for an `azure` provider. */
export function azureProvider(deps: ProviderDeps, timing: RetryTiming = {}): Provider {
  const { base_url: baseUrl, azure } = deps.config;
  if (azure === undefined) throw new Error(`provider ${deps.config.id} is not an azure provider`);
  const headers: Record<string, string> = {};
  if (deps.apiKey) {
    if (azure.bearer_token_env !== null) headers.authorization = `Bearer ${deps.apiKey}`;
    else headers["api-key"] = deps.apiKey;
  }
  const version = azure.api_version;
  const modern = isAzureV1(version) || version >= MAX_COMPLETION_TOKENS_SINCE;
  return new OpenAIProvider(deps, timing, {
    style: {
      headers,
      parseError: parseAzureError,
      mapError: (status) =>
        status === 401 || status === 403
          ? credentialsRefused(deps.config.id, status, azureCredential(azure.bearer_token_env))
          : null,
      url: (request) => azureUrl(baseUrl, version, request),
    },
    maxTokensField: modern ? "max_completion_tokens" : "max_tokens",
  });
}

/** What an operator checks when Azure refuses the gateway's credentials. */
function azureCredential(bearerTokenEnv: string | null): string {
  return bearerTokenEnv === null
    ? "its API key (api_key_env)"
    : "its Microsoft Entra ID token (bearer_token_env): the gateway reads it at start and does not renew it, and its identity needs the Cognitive Services OpenAI User role";
}
