import { unsupportedCapability, upstreamError } from "../../errors.ts";
import { BytesResponse, json } from "../../http/response.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { aroundModel } from "../../pipeline/model_step.ts";
import type { EmbeddingResponse } from "../../types/openai.ts";
import { openModel, untilClientLeaves, withDropped } from "../shared/model_call.ts";
import { embeddingModelId, readEmbeddingRequest } from "./request.ts";

const JSON_INIT = { headers: { "content-type": "application/json" } };

/**
 * `POST /v1/embeddings`, OpenAI's shape: the model is resolved first (404, 401/403), then it
 * must have `embeddings` (400 `unsupported_capability`), then the request is checked against
 * its settings. One vector per input, in the encoding asked for, with the gateway's model id.
 */
export async function createEmbeddings(ctx: RequestContext): Promise<Response> {
  const { config } = ctx.services;
  const body = ctx.body;
  const { record, provider, call } = openModel(ctx, embeddingModelId(body));
  const settings = record.embeddings;
  if (!settings) {
    throw unsupportedCapability(
      `The model \`${record.id}\` does not serve embeddings; use a model with embeddings: true (GET /v1/models lists them).`,
      "model",
    );
  }
  const request = readEmbeddingRequest(body, record.id, settings);
  // The model steps see the inputs (input guardrails); a step that cannot embed refuses.
  const stepped = aroundModel(ctx.services.modelSteps, provider, ctx, record, "embed");
  const embed = (stepped ?? provider).embed?.bind(stepped ?? provider);
  if (!embed) {
    throw unsupportedCapability(
      `The provider of \`${record.id}\` cannot serve embeddings (the openai, azure, gemini, vertex, bedrock and simulator styles serve them).`,
      "model",
    );
  }
  if (config.logs.include_content) ctx.content = request.input;
  const result = await untilClientLeaves(ctx, () => embed(request, call));
  ctx.usage = { input: result.promptTokens, output: 0 };
  // Passed on as the upstream wrote it (its vectors counted there).
  if ("answer" in result) {
    return withDropped(new BytesResponse(result.answer, JSON_INIT, result.release), call);
  }
  if (result.embeddings.length !== request.input.length) {
    throw upstreamError(
      `The embedding model \`${record.id}\` returned ${result.embeddings.length} vectors for ${request.input.length} inputs.`,
    );
  }
  const response: EmbeddingResponse = {
    object: "list",
    data: result.embeddings.map((embedding, index) => ({
      object: "embedding",
      index,
      embedding,
    })),
    model: record.id,
    usage: { prompt_tokens: result.promptTokens, total_tokens: result.promptTokens },
  };
  return withDropped(json(response), call);
}
