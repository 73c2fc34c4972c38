import { viewerOf } from "../auth/principal.ts";
import { visibleModels } from "../catalogue/access.ts";
import { toApiModel } from "../catalogue/model.ts";
import type { RequestContext } from "../context.ts";
import { json } from "../http/response.ts";
import type { ModelList } from "../types/openai.ts";

/** `GET /v1/models`: the models this caller may see (spec §4.1). */
export function listModels(ctx: RequestContext): Response {
  const { catalogue, providers } = ctx.services;
  const list: ModelList = {
    object: "list",
    data: visibleModels(catalogue, providers, viewerOf(ctx.principal)).map(toApiModel),
  };
  return json(list);
}
