import { allowListWarnings, keyView, readKeyFields } from "../../auth/key_fields.ts";
import type { KeyFields } from "../../auth/keys.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { json } from "../../http/response.ts";
import { notFound, readBody } from "./input.ts";

/** `POST /admin/keys`: creates a key; the answer is the only time the key is shown. */
export async function createKey(ctx: RequestContext): Promise<Response> {
  const body = await readBody(ctx);
  const fields = readKeyFields(body, "create");
  const { key, record } = await ctx.services.keys.create(fields);
  const { id, ...rest } = keyView(record);
  return json({ id, key, ...rest, ...warnings(ctx, fields) }, 201);
}

/** `GET /admin/keys`: every key, oldest first, without hashes or keys. */
export async function listKeys(ctx: RequestContext): Promise<Response> {
  const records = await ctx.services.keys.list();
  return json({ object: "list", data: records.map(keyView) });
}

/** `GET /admin/keys/{id}`. */
export async function getKey(ctx: RequestContext): Promise<Response> {
  const id = ctx.params.id!;
  const record = await ctx.services.keys.get(id);
  if (record === null) throw notFound("API key", id, "key_not_found");
  return json(keyView(record));
}

/** `PATCH /admin/keys/{id}`: changes name, models, preview, limits or disabled. */
export async function updateKey(ctx: RequestContext): Promise<Response> {
  const id = ctx.params.id!;
  const body = await readBody(ctx);
  const fields = readKeyFields(body, "update");
  const record = await ctx.services.keys.update(id, fields);
  if (record === null) throw notFound("API key", id, "key_not_found");
  return json({ ...keyView(record), ...warnings(ctx, fields) });
}

/** `{warnings}` when the allow-list given lets the key use no model in the catalogue (see
 * {@link allowListWarnings}; the key is stored anyway: the model may be added later), or `{}`. */
function warnings(ctx: RequestContext, fields: KeyFields): { warnings?: string[] } {
  if (fields.models === undefined) return {};
  const ids = ctx.services.catalogue.all().map((m) => m.id);
  const lines = allowListWarnings(fields.models, ids);
  return lines.length === 0 ? {} : { warnings: lines };
}

/** `DELETE /admin/keys/{id}`: revokes the key on every instance from the next request. */
export async function revokeKey(ctx: RequestContext): Promise<Response> {
  const id = ctx.params.id!;
  if (!(await ctx.services.keys.revoke(id))) throw notFound("API key", id, "key_not_found");
  return new Response(null, { status: 204 });
}
