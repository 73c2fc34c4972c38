import assert from "node:assert/strict";
import { azureUrl } from "../../../src/providers/azure/url.ts";
import type { UpstreamRequest } from "../../../src/providers/upstream/request.ts";

const BASE = "https://contoso.openai.azure.com";

function request(path: string, deployment?: string): UpstreamRequest {
  return {
    method: "POST",
    path,
    signal: new AbortController().signal,
    requestId: "req_1",
    ...(deployment ? { model: { id: "gw-model", upstream: deployment } } : {}),
  };
}

Deno.test("azure url: a dated version puts the deployment in the path and the version in the query", () => {
  assert.equal(
    azureUrl(BASE, "2024-10-21", request("/chat/completions", "gpt-4o prod")),
    `${BASE}/openai/deployments/gpt-4o%20prod/chat/completions?api-version=2024-10-21`,
  );
  assert.equal(
    azureUrl(BASE, "2025-04-01-preview", request("/embeddings", "embed")),
    `${BASE}/openai/deployments/embed/embeddings?api-version=2025-04-01-preview`,
  );
  assert.equal(
    azureUrl(BASE, "2025-04-01-preview", request("/images/generations", "dalle")),
    `${BASE}/openai/deployments/dalle/images/generations?api-version=2025-04-01-preview`,
  );
});

Deno.test("azure url: the Responses API is the resource's, not a deployment's", () => {
  assert.equal(
    azureUrl(BASE, "2025-04-01-preview", request("/responses", "gpt-4o")),
    `${BASE}/openai/responses?api-version=2025-04-01-preview`,
  );
});

Deno.test("azure url: v1 has no version in the query; preview and latest name theirs", () => {
  assert.equal(
    azureUrl(BASE, "v1", request("/chat/completions", "gpt-4o")),
    `${BASE}/openai/v1/chat/completions`,
  );
  assert.equal(
    azureUrl(BASE, "preview", request("/responses", "gpt-4o")),
    `${BASE}/openai/v1/responses?api-version=preview`,
  );
  assert.equal(
    azureUrl(BASE, "latest", request("/embeddings", "e")),
    `${BASE}/openai/v1/embeddings?api-version=latest`,
  );
});
