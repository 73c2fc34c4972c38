/**
 * Resolving the model a front door was asked for (DESIGN §3), where the front door wants it
 * (after its parse, or before the checks that depend on the model).
 */
import { viewerOf } from "../auth/principal.ts";
import { resolveModel } from "../catalogue/access.ts";
import type { ModelRecord } from "../catalogue/model.ts";
import type { RequestContext } from "./context.ts";

/**
 * The model `id`, if this caller may use it: 404 `model_not_found` when it does not exist, is
 * not served or is hidden from the caller; 401 for a model that needs a key, asked for
 * anonymously; 403 for a preview model or one outside the key's allow-list. The requested id
 * and the model's provider are kept for settle (the log record).
 */
export function resolve(ctx: RequestContext, id: string, param = "model"): ModelRecord {
  ctx.model = id;
  const { catalogue, providers } = ctx.services;
  const record = resolveModel(catalogue, providers, id, viewerOf(ctx.principal), param);
  ctx.provider = record.provider;
  return record;
}
