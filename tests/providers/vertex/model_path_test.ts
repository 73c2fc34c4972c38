import assert from "node:assert/strict";
import type { VertexConfig } from "../../../src/config/types.ts";
import { vertexModel, vertexModelPath } from "../../../src/providers/vertex/model_path.ts";

const VERTEX: VertexConfig = {
  project: "my-project",
  region: "us-east5",
  credentials_env: "SA",
  metadata_server: false,
  token_url: "https://oauth2.googleapis.com/token",
  publisher: null,
};

Deno.test("vertex model: the publisher from the name, the provider, or written out", () => {
  assert.deepEqual(vertexModel("claude-sonnet-4-5@20250929", VERTEX), {
    publisher: "anthropic",
    name: "claude-sonnet-4-5@20250929",
  });
  assert.deepEqual(vertexModel("gemini-2.5-pro", VERTEX), {
    publisher: "google",
    name: "gemini-2.5-pro",
  });
  assert.deepEqual(vertexModel("gemini-2.5-pro", { ...VERTEX, publisher: "anthropic" }), {
    publisher: "anthropic",
    name: "gemini-2.5-pro",
  });
  assert.deepEqual(vertexModel("publishers/google/models/claude-like-name", VERTEX), {
    publisher: "google",
    name: "claude-like-name",
  });
});

Deno.test("vertex model path: project, location, publisher, the model with its @version", () => {
  assert.equal(
    vertexModelPath(VERTEX, "anthropic", "claude-sonnet-4-5@20250929", "streamRawPredict"),
    "/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict",
  );
  assert.equal(
    vertexModelPath({ ...VERTEX, region: "global" }, "google", "gemini-2.5-pro", "generateContent"),
    "/v1/projects/my-project/locations/global/publishers/google/models/gemini-2.5-pro:generateContent",
  );
});
