import { isServed } from "../../catalogue/access.ts";
import type { ModelRecord } from "../../catalogue/model.ts";
import { MODEL_ID, readModel } from "../../config/models.ts";
import type { ModelConfig } from "../../config/types.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { json } from "../../http/response.ts";
import { notFound, readBody } from "./input.ts";
import { quote } from "../../quote.ts";
import { invalidValue, missingParameter } from "../../validation/error.ts";
import { isObject, readJson } from "../../validation/reader.ts";

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
 * `PUT /admin/models/{id}`: adds (201) or replaces (200) a model (the body is a config model
 * entry; its `id` may be left out; fields left out take their defaults). This instance serves
 * it at once, every other within a second. The record is admin-owned from then on: seeding
 * from a config never changes it.
 */
export async function putAdminModel(ctx: RequestContext): Promise<Response> {
  const id = ctx.params.id!;
  const model = readEntry(ctx, id, await readBody(ctx));
  const { record, created } = await ctx.services.catalogue.write(
    id,
    (prior) => adminRecord(ctx, model, prior),
  );
  return json(modelView(ctx, record), created ? 201 : 200);
}

/**
 * `PATCH /admin/models/{id}`: changes only the fields given (`{"enabled": false}` hides a
 * model and keeps the rest), validated as PUT validates the whole entry; 400 for a body with
 * no field, 404 for an unknown model.
 */
export async function patchAdminModel(ctx: RequestContext): Promise<Response> {
  const id = ctx.params.id!;
  const body = await readBody(ctx);
  if (Object.keys(body).length === 0) {
    throw readJson(body).invalid("nothing to change: give one or more fields of a model entry");
  }
  // No model has an id that is not one (and so no KV key is too long to look up).
  if (!MODEL_ID.pattern.test(id)) throw notFound("model", id, "model_not_found");
  const { record } = await ctx.services.catalogue.write(id, (prior) => {
    if (!prior) throw notFound("model", id, "model_not_found");
    return adminRecord(ctx, readEntry(ctx, id, patched(prior, body)), prior);
  });
  return json(modelView(ctx, record));
}

/**
 * The config entry of `prior` with the fields of `body` over it. A model has either `provider`
 * (and `upstream_model`) or `routes`, so a body giving one form drops the other; an upstream
 * model other than the id that the dropped form named is not carried over silently: a body
 * that switches forms must name the new form's upstream models (a 400 naming the field).
 */
function patched(prior: ModelRecord, body: Record<string, unknown>): Record<string, unknown> {
  const { source: _source, config_hash: _hash, ...stored } = prior;
  const givesProvider = "provider" in body || "upstream_model" in body;
  const givesRoutes = "routes" in body;
  if (givesProvider && !givesRoutes && !("upstream_model" in body)) {
    const named = stored.routes?.find((route) => route.upstream_model !== stored.id);
    if (named) {
      throw missingParameter(
        "upstream_model",
        `The model's routes name the upstream model ${
          quote(named.upstream_model)
        }, which a provider without one would not keep: name its upstream_model.`,
      );
    }
  }
  if (givesRoutes && !givesProvider && !stored.routes && stored.upstream_model !== stored.id) {
    checkRoutesNameUpstream(body.routes, stored.upstream_model);
  }
  // A model with routes is written with them alone (its provider fields mirror the first).
  const { provider, upstream_model, routes, ...rest } = stored;
  const entry: Record<string, unknown> = rest;
  if (routes && !givesProvider) entry.routes = routes;
  if (!routes && !givesRoutes) Object.assign(entry, { provider, upstream_model });
  return { ...entry, ...body };
}

/** Refuses a route of `routes` (as sent) that names no `upstream_model` when the model's
 * `upstream` is not its id: the route would serve the id instead. */
function checkRoutesNameUpstream(routes: unknown, upstream: string): void {
  if (!Array.isArray(routes)) return; // not routes at all: reading the entry says so
  routes.forEach((route, i) => {
    if (isObject(route) && !("upstream_model" in route)) {
      throw missingParameter(
        `routes[${i}].upstream_model`,
        `The model's upstream_model is ${
          quote(upstream)
        }, which a route without one would not keep: name each route's upstream_model.`,
      );
    }
  });
}

/** Validates `body` as a config model entry with the path's `id`. */
function readEntry(ctx: RequestContext, id: string, body: Record<string, unknown>): ModelConfig {
  const { catalogue, config } = ctx.services;
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
  return model;
}

/** The admin-owned record of `model`, keeping the registration time of the record it
 * replaces (`prior`). */
function adminRecord(
  ctx: RequestContext,
  model: ModelConfig,
  prior: ModelRecord | undefined,
): ModelRecord {
  return {
    ...model,
    created: model.created ?? prior?.created ?? Math.floor(ctx.services.clock.now() / 1000),
    source: "admin",
  };
}

/** `DELETE /admin/models/{id}`: removes a model from the catalogue of every instance. */
export async function deleteAdminModel(ctx: RequestContext): Promise<Response> {
  const id = ctx.params.id!;
  if (!(await ctx.services.catalogue.delete(id))) throw notFound("model", id, "model_not_found");
  return new Response(null, { status: 204 });
}
