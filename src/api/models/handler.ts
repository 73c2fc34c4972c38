import { authenticatesAsGoogle } from "../../auth/authenticate.ts";
import { viewerOf } from "../../auth/principal.ts";
import { canSee, isServed, visibleModels } from "../../catalogue/access.ts";
import { type ModelRecord, toApiModel } from "../../catalogue/model.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { modelNotFound } from "../../errors.ts";
import { json } from "../../http/response.ts";
import type { ModelList } from "../../types/openai.ts";
import { getGeminiModel, listGeminiModels } from "../gemini/models.ts";

/** A model in Anthropic's shape (`GET /v1/models` of the Messages API). */
interface AnthropicModel {
  type: "model";
  id: string;
  display_name: string;
  /** RFC 3339. */
  created_at: string;
}

/**
 * `GET /v1/models`: the models this caller may see (spec §4.1). A request with an
 * `anthropic-version` header (Anthropic's SDKs, Claude Code) gets Anthropic's list shape:
 * `{data, has_more, first_id, last_id}`, every model on one page; one that authenticates the
 * Gemini way (`x-goog-api-key`) Gemini's (`api/gemini/models.ts`).
 */
export function listModels(ctx: RequestContext): Response {
  if (authenticatesAsGoogle(ctx.request)) return listGeminiModels(ctx);
  const { catalogue, providers } = ctx.services;
  const records = visibleModels(catalogue, providers, viewerOf(ctx.principal));
  if (wantsAnthropic(ctx)) {
    const data = records.map(toAnthropicModel);
    return json({
      data,
      has_more: false,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
    });
  }
  const list: ModelList = { object: "list", data: records.map(toApiModel) };
  return json(list);
}

/** `GET /v1/models/{id}` (OpenAI's "retrieve model", Anthropic's with `anthropic-version`,
 * Gemini's for a caller that authenticates the Gemini way): the model object, if the list
 * would show it to this caller; otherwise 404 `model_not_found`, whether the model is
 * unknown, disabled or hidden from the caller, so that the answer does not tell them apart. */
export function retrieveModel(ctx: RequestContext): Response {
  if (authenticatesAsGoogle(ctx.request)) return getGeminiModel(ctx);
  const { catalogue, providers } = ctx.services;
  const id = ctx.params.id!;
  const record = catalogue.get(id);
  if (!record || !isServed(record, providers) || !canSee(record, viewerOf(ctx.principal))) {
    throw modelNotFound(id);
  }
  return json(wantsAnthropic(ctx) ? toAnthropicModel(record) : toApiModel(record));
}

/** Whether the caller speaks Anthropic's API. */
function wantsAnthropic(ctx: RequestContext): boolean {
  return ctx.request.headers.has("anthropic-version");
}

/** A record in Anthropic's model shape: its name is its id, its registration time the date. */
function toAnthropicModel(record: ModelRecord): AnthropicModel {
  return {
    type: "model",
    id: record.id,
    display_name: record.id,
    created_at: new Date(record.created * 1000).toISOString().replace(".000Z", "Z"),
  };
}
