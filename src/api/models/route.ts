import { viewerOf } from "../../auth/principal.ts";
import { canSee, isServed, visibleModels } from "../../catalogue/access.ts";
import { toApiModel } from "../../catalogue/model.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { modelNotFound } from "../../errors.ts";
import { json } from "../../http/response.ts";
import type { ModelList } from "../../types/openai.ts";

/** `GET /v1/models`: the models this caller may see (spec §4.1). */
export function listModels(ctx: RequestContext): Response {
  const { catalogue, providers } = ctx.services;
  const list: ModelList = {
    object: "list",
    data: visibleModels(catalogue, providers, viewerOf(ctx.principal)).map(toApiModel),
  };
  return json(list);
}

/** `GET /v1/models/{id}` (OpenAI's "retrieve model"): the model object, if the list would show
 * it to this caller; otherwise 404 `model_not_found`, whether the model is unknown, disabled or
 * hidden from the caller, so that the answer does not tell them apart. */
export function retrieveModel(ctx: RequestContext): Response {
  const { catalogue, providers } = ctx.services;
  const id = ctx.params.id!;
  const record = catalogue.get(id);
  if (!record || !isServed(record, providers) || !canSee(record, viewerOf(ctx.principal))) {
    throw modelNotFound(id);
  }
  return json(toApiModel(record));
}
