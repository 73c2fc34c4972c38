/**
 * The `moderation` guardrail's check: a text moderated by a moderation model of the catalogue
 * (the guardrail's `model`, else the default moderation model) through its provider's
 * moderation API or a guard prompt (`moderation_mode`), and the category that crosses its
 * threshold, if any. A failure throws; the caller applies `on_error`.
 */
import type { GuardrailConfig, ModerationCategory } from "../config/types.ts";
import { MODERATION_CATEGORIES } from "../config/types.ts";
import { isServed } from "../catalogue/access.ts";
import type { ModelRecord } from "../catalogue/model.ts";
import { guardModerate } from "../moderation/guard.ts";
import { finalizeResult } from "../moderation/result.ts";
import type { RequestContext } from "../pipeline/context.ts";

/** Why a moderation check could not be made. */
export class ModerationFailure extends Error {}

/** The moderation model of `guardrail`. */
function moderationModel(ctx: RequestContext, guardrail: GuardrailConfig): ModelRecord {
  const { catalogue, providers } = ctx.services;
  const record = guardrail.model !== undefined
    ? catalogue.get(guardrail.model)
    : catalogue.all().filter((m) => m.default_moderation && m.moderation && isServed(m, providers))
      .sort((a, b) => (a.id < b.id ? -1 : 1))[0];
  if (!record) {
    throw new ModerationFailure(
      guardrail.model ? `no model ${guardrail.model}` : "no default moderation model",
    );
  }
  if (!record.moderation || !isServed(record, providers)) {
    throw new ModerationFailure(`the model ${record.id} does not moderate here`);
  }
  return record;
}

/** The category of `text` that crosses the guardrail's threshold (its `categories`, else the
 * model's own flags), with the highest score; `null` when none does. */
export async function flaggedCategory(
  ctx: RequestContext,
  guardrail: GuardrailConfig,
  text: string,
  signal: AbortSignal,
): Promise<ModerationCategory | null> {
  const record = moderationModel(ctx, guardrail);
  const route = record.routes?.find((r) => ctx.services.providers.isAvailable(r.provider)) ??
    { provider: record.provider, upstream_model: record.upstream_model };
  const provider = ctx.services.providers.get(route.provider);
  if (!provider) throw new ModerationFailure(`the provider of ${record.id} is not available`);
  const call = {
    signal,
    requestId: ctx.requestId,
    upstreamModel: route.upstream_model,
    model: record,
    dropped: new Set<string>(),
  };
  const request = { model: record.id, input: [text], input_images: [] };
  const results = record.moderation_mode === "guard"
    ? await guardModerate(provider, request, call)
    : provider.moderate
    ? await provider.moderate(request, call)
    : null;
  if (results === null) throw new ModerationFailure(`${record.id} has no moderation API`);
  if (results.length !== 1) throw new ModerationFailure(`${record.id} answered no result`);
  const thresholds = guardrail.categories;
  const result = finalizeResult(results[0]!, thresholds ?? record.moderation_thresholds);
  let worst: ModerationCategory | null = null;
  for (const category of MODERATION_CATEGORIES) {
    if (thresholds !== undefined && thresholds[category] === undefined) continue;
    if (!result.categories[category]) continue;
    if (worst === null || result.category_scores[category]! > result.category_scores[worst]!) {
      worst = category;
    }
  }
  return worst;
}
