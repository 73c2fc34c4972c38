import { unsupportedCapability } from "../../errors.ts";
import { json } from "../../http/response.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { openModel, untilClientLeaves } from "../shared/model_call.ts";
import { readRerankRequest, rerankModelId } from "./request.ts";
import { toRerankResponse } from "./response.ts";

/**
 * `POST /v1/rerank`: the model is resolved first (404, 401/403), then it must have `rerank`
 * (400 `unsupported_capability`), then the request is checked against its settings. The
 * documents' scores, best first, with the gateway's model id and the tokens read; the log
 * shows the query and documents only with `logs.include_content`.
 */
export async function createRerank(ctx: RequestContext): Promise<Response> {
  const { config } = ctx.services;
  const body = ctx.body;
  const { record, provider, call } = openModel(ctx, rerankModelId(body));
  const settings = record.rerank;
  if (!settings) {
    throw unsupportedCapability(
      `The model \`${record.id}\` does not rerank; use a model with rerank: true (GET /v1/models lists them).`,
      "model",
    );
  }
  const request = readRerankRequest(body, record.id, settings);
  const rerank = provider.rerank?.bind(provider);
  if (!rerank) {
    throw unsupportedCapability(
      `The provider of \`${record.id}\` cannot rerank (only OpenAI-style providers and the simulator can so far).`,
      "model",
    );
  }
  if (config.logs.include_content) {
    ctx.content = { query: request.query, documents: request.documents };
  }
  const result = await untilClientLeaves(ctx, () => rerank(request, call));
  ctx.usage = { input: result.tokens, output: 0 };
  const id = "rerank-" + ctx.requestId.slice("req_".length);
  return json(toRerankResponse(id, record.id, request, result));
}
