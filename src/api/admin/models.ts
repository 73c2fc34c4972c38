import { isServed } from "../../catalogue/access.ts";
import type { ModelRecord } from "../../catalogue/model.ts";
import { readModel } from "../../config.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { json } from "../../http/response.ts";
import { notFound, readBody } from "./input.ts";
import { quote } from "../../quote.ts";
import { invalidValue } from "../../validation/error.ts";
import { readJson } from "../../validation/reader.ts";

/** A catalogue record as the admin API shows it: everything stored, plus whether its provider
 * is available here and whether it is served (enabled and available). */
function modelView(ctx: RequestContext, record: ModelRecord) {
  const { providers } = ctx.services;
  return {
    ...record,
    available: providers.isAvailable(record.provider),
    served: isServed(record, providers),
  };
}

/** `GET /admin/models`: every model in the catalogue, disabled and unavailable ones too. */
export function listAdminModels(ctx: RequestContext): Response {
  const records = ctx.services.catalogue.all().sort((a, b) => (a.id < b.id ? -1 : 1));
  return json({ object: "list", data: records.map((r) => modelView(ctx, r)) });
}

/** `GET /admin/models/{id}`. */
export function getAdminModel(ctx: RequestContext): Response {
  const id = ctx.params.id!;
  const record = ctx.services.catalogue.get(id);
  if (!record) throw notFound("model", id, "model_not_found");
  return json(modelView(ctx, record));
}

/**
 * `PUT /admin/models/{id}`: adds or replaces a model (the body is a config model entry; its
 * `id` may be left out; fields left out take their defaults). This instance serves it at
 * once, every other within a second. The record is admin-owned from then on: seeding from a
 * config never changes it.
 */
export async function putAdminModel(ctx: RequestContext): Promise<Response> {
  const id = ctx.params.id!;
  const prior = ctx.services.catalogue.get(id);
  const record = await writeModel(ctx, id, await readBody(ctx), prior);
  return json(modelView(ctx, record), prior ? 200 : 201);
}

/**
 * `PATCH /admin/models/{id}`: changes only the fields given (`{"enabled": false}` hides a
 * model and keeps the rest), validated as PUT validates the whole entry; 404 for an unknown
 * model.
 */
export async function patchAdminModel(ctx: RequestContext): Promise<Response> {
  const id = ctx.params.id!;
  const body = await readBody(ctx);
  const prior = ctx.services.catalogue.get(id);
  if (!prior) throw notFound("model", id, "model_not_found");
  const { source: _source, config_hash: _hash, ...stored } = prior;
  // A model with routes is written with them alone (its provider fields mirror the first).
  const { provider: _provider, upstream_model: _upstream, ...routed } = stored;
  const entry: Record<string, unknown> = stored.routes ? routed : stored;
  if ("provider" in body || "upstream_model" in body) delete entry.routes;
  if ("routes" in body) {
    delete entry.provider;
    delete entry.upstream_model;
  }
  return json(modelView(ctx, await writeModel(ctx, id, { ...entry, ...body }, prior)));
}

/** Validates `body` as a config model entry with the path's `id` and stores it as admin-owned. */
async function writeModel(
  ctx: RequestContext,
  id: string,
  body: Record<string, unknown>,
  prior: ModelRecord | undefined,
): Promise<ModelRecord> {
  const { catalogue, config, clock } = ctx.services;
  if (body.id !== undefined && body.id !== id) {
    throw invalidValue(
      "id",
      `expected the id in the path, ${quote(id)}, but got ${quote(body.id)}`,
    );
  }
  const providers = new Map(config.providers.map((p) => [p.id, p]));
  const model = readModel(readJson({ ...body, id }), providers);
  if (model.default_moderation) {
    const other = catalogue.all().find((m) => m.default_moderation && m.id !== id);
    if (other) {
      throw invalidValue(
        "default_moderation",
        `"${other.id}" is already the default moderation model; unset it there first`,
      );
    }
  }
  const record: ModelRecord = {
    ...model,
    created: model.created ?? prior?.created ?? Math.floor(clock.now() / 1000),
    source: "admin",
  };
  await catalogue.put(record);
  return record;
}

/** `DELETE /admin/models/{id}`: removes a model from the catalogue of every instance. */
export async function deleteAdminModel(ctx: RequestContext): Promise<Response> {
  const id = ctx.params.id!;
  if (!(await ctx.services.catalogue.delete(id))) throw notFound("model", id, "model_not_found");
  return new Response(null, { status: 204 });
}
