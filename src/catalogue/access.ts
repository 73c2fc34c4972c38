import { forbidden, modelNotFound, unauthorized } from "../errors.ts";
import type { ProviderLookup } from "../providers/types.ts";
import type { Catalogue } from "./store.ts";
import { accessAllows, allowListMatches, type ModelRecord, type Viewer } from "./model.ts";

/** Whether a model is in service here: enabled, and the provider of one of its routes
 * configured with its key. */
export function isServed(record: ModelRecord, providers: ProviderLookup): boolean {
  return record.enabled &&
    (record.routes === undefined
      ? providers.isAvailable(record.provider)
      : record.routes.some((route) => providers.isAvailable(route.provider)));
}

/** Whether a viewer may see (and use) a served model. */
export function canSee(record: ModelRecord, viewer: Viewer): boolean {
  return accessAllows(record.access, viewer) && allowListMatches(viewer.models, record.id);
}

/** The models a viewer may see, sorted: featured first, then by id. */
export function visibleModels(
  catalogue: Catalogue,
  providers: ProviderLookup,
  viewer: Viewer,
): ModelRecord[] {
  return catalogue.all()
    .filter((m) => isServed(m, providers) && canSee(m, viewer))
    .sort((a, b) =>
      Number(b.featured) - Number(a.featured) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
    );
}

/**
 * The record a caller asks for by id, or the error the spec prescribes: unknown -> 404
 * `model_not_found`; a model that needs a key, asked for anonymously -> 401; a preview model
 * for a key without preview, or a model outside the key's allow-list -> 403.
 */
export function resolveModel(
  catalogue: Catalogue,
  providers: ProviderLookup,
  id: string,
  viewer: Viewer,
  param = "model",
): ModelRecord {
  const record = catalogue.get(id);
  if (!record || !isServed(record, providers)) throw modelNotFound(id, param);
  if (!accessAllows(record.access, viewer)) {
    if (viewer.keyId === null) {
      throw unauthorized(
        `The model \`${id}\` requires an API key: send "Authorization: Bearer <API key>".`,
      );
    }
    throw forbidden(`Your API key is not granted access to the preview model \`${id}\`.`, param);
  }
  if (!allowListMatches(viewer.models, id)) {
    throw forbidden(`Your API key is not permitted to use the model \`${id}\`.`, param);
  }
  return record;
}
