import { isServed } from "../../catalogue/access.ts";
import type { ModelRecord } from "../../catalogue/model.ts";
import { ApiError, invalidRequest, unsupportedCapability, upstreamError } from "../../errors.ts";
import { json } from "../../http/response.ts";
import { guardModerate } from "../../moderation/guard.ts";
import { finalizeResult } from "../../moderation/result.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { resolve } from "../../pipeline/resolve.ts";
import type { ModerationRequest, ModerationResponse } from "../../types/openai.ts";
import { modelCall } from "../shared/model_call.ts";
import { moderationModelId, readModerationInput } from "./request.ts";

/**
 * The default moderation model (spec §4.3 rule 2), or a 400 saying that none is configured or
 * available. Access rules apply to it as to a named model.
 */
function defaultModel(ctx: RequestContext): ModelRecord {
  const { catalogue, providers } = ctx.services;
  const defaults = catalogue.all()
    .filter((m) => m.default_moderation && m.moderation)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  if (defaults.length === 0) {
    throw invalidRequest(
      "No 'model' was given and no default moderation model is configured. Name a model with " +
        "moderation: true (GET /v1/models lists them).",
      "model",
      "no_default_model",
    );
  }
  const served = defaults.find((m) => isServed(m, providers));
  if (!served) {
    throw invalidRequest(
      `No 'model' was given and the default moderation model \`${
        defaults[0]!.id
      }\` is not available at the moment. Name another model with moderation: true.`,
      "model",
      "no_default_model",
    );
  }
  return resolve(ctx, served.id);
}

/**
 * `POST /v1/moderations` (spec §4.3): one result per input text, each text moderated together
 * with its paired images (see moderation/pairing.ts).
 */
export async function createModeration(ctx: RequestContext): Promise<Response> {
  const { config } = ctx.services;
  const body = ctx.body;
  const id = moderationModelId(body);
  const record = id === null ? defaultModel(ctx) : resolve(ctx, id);
  const { provider, call } = modelCall(ctx, record);
  if (!record.moderation) {
    throw unsupportedCapability(
      `The model \`${record.id}\` does not support moderation; use a model with moderation: true.`,
      "model",
    );
  }
  const { input, images } = readModerationInput(body, config.limits);
  if (images.length > 0 && !record.image_input) {
    throw unsupportedCapability(
      `The model \`${record.id}\` cannot moderate images (image_input is false); send text only or use a model with image_input.`,
      "input_images",
    );
  }
  if (config.logs.include_content) ctx.content = input;
  const request: ModerationRequest = { model: record.id, input, input_images: images };

  let results;
  if (record.moderation_mode === "guard") results = await guardModerate(provider, request, call);
  else if (provider.moderate) results = await provider.moderate(request, call);
  else {
    throw new ApiError(
      501,
      "server_error",
      `Provider "${record.provider}" has no moderation API; set moderation_mode: "guard" for \`${record.id}\`.`,
      { code: "not_implemented" },
    );
  }
  if (results.length !== input.length) {
    throw upstreamError(
      `The moderation model \`${record.id}\` returned ${results.length} results for ${input.length} inputs.`,
    );
  }
  const response: ModerationResponse = {
    id: "modr-" + crypto.randomUUID().replaceAll("-", ""),
    model: record.id,
    results: results.map((r) => finalizeResult(r, record.moderation_thresholds)),
  };
  return json(response);
}
