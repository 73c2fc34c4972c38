/**
 * Where Azure OpenAI serves a call: a dated `api_version` addresses the deployment in the path
 * (`/openai/deployments/{deployment}/chat/completions?api-version=2024-10-21`); `v1`, `preview`
 * or `latest` address the v1 API (`/openai/v1/chat/completions`, the deployment as the body's
 * `model`, `?api-version=` only for the preview and latest surfaces).
 */
import type { UpstreamRequest } from "../upstream/request.ts";

/** The API versions that address the v1 API rather than a deployment's path. */
const V1_VERSIONS: ReadonlySet<string> = new Set(["v1", "preview", "latest"]);

/** The paths of OpenAI's API that Azure serves beside the deployments, not under one. */
const RESOURCE_PATHS: ReadonlySet<string> = new Set(["/responses", "/models"]);

/** Whether `apiVersion` addresses Azure's v1 API. */
export function isAzureV1(apiVersion: string): boolean {
  return V1_VERSIONS.has(apiVersion);
}

/**
 * The URL of a call whose path is OpenAI's (`/chat/completions`, `/embeddings`,
 * `/images/generations`, `/responses`) on the resource at `baseUrl`; the deployment is the
 * request's upstream model.
 */
export function azureUrl(baseUrl: string, apiVersion: string, request: UpstreamRequest): string {
  const version = encodeURIComponent(apiVersion);
  if (isAzureV1(apiVersion)) {
    return `${baseUrl}/openai/v1${request.path}${
      apiVersion === "v1" ? "" : `?api-version=${version}`
    }`;
  }
  const deployment = request.model?.upstream;
  const under = deployment === undefined || RESOURCE_PATHS.has(request.path)
    ? "/openai"
    : `/openai/deployments/${encodeURIComponent(deployment)}`;
  return `${baseUrl}${under}${request.path}?api-version=${version}`;
}
