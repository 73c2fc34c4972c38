/**
 * The models in Gemini's shape (`GET /v1beta/models`, `GET /v1beta/models/{model}`, and
 * `/v1/models` for a caller that authenticates the Gemini way): what the caller may use, as the
 * catalogue shows it to them (`catalogue/access.ts`), each `models/{id}` with the methods the
 * gateway serves for it.
 */
import { viewerOf } from "../../auth/principal.ts";
import { canSee, isServed, visibleModels } from "../../catalogue/access.ts";
import type { ModelRecord } from "../../catalogue/model.ts";
import { modelNotFound } from "../../errors.ts";
import { json } from "../../http/response.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import type { GeminiModel, GeminiModelList } from "../../types/gemini.ts";
import { GEMINI_METHODS } from "./method.ts";

/** `GET /v1beta/models`: every model on one page. */
export function listGeminiModels(ctx: RequestContext): Response {
  const { catalogue, providers } = ctx.services;
  const records = visibleModels(catalogue, providers, viewerOf(ctx.principal));
  const list: GeminiModelList = { models: records.map(toGeminiModel) };
  return json(list);
}

/** `GET /v1beta/models/{model}`: the model if the list would show it to this caller, else a
 * 404 that does not say whether it exists. */
export function getGeminiModel(ctx: RequestContext): Response {
  const { catalogue, providers } = ctx.services;
  const id = ctx.params.id!.replace(/^models\//, "");
  const record = catalogue.get(id);
  if (!record || !isServed(record, providers) || !canSee(record, viewerOf(ctx.principal))) {
    throw modelNotFound(id);
  }
  return json(toGeminiModel(record));
}

/** A record in Gemini's model shape. */
export function toGeminiModel(record: ModelRecord): GeminiModel {
  const model: GeminiModel = {
    name: `models/${record.id}`,
    baseModelId: record.id,
    version: "001",
    displayName: record.id,
    supportedGenerationMethods: record.chat_completions ? [...GEMINI_METHODS] : [],
  };
  if (record.context_length !== null) model.inputTokenLimit = record.context_length;
  if (record.default_max_tokens) model.outputTokenLimit = record.default_max_tokens;
  return model;
}
