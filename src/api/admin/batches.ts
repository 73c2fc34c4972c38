/** `GET /admin/batches`: every key's batches, newest first, with their progress. */
import { json } from "../../http/response.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { batchObject } from "../batches/object.ts";
import { OPTIONAL } from "../../validation/reader.ts";
import { pageLimit, queryFields } from "../../validation/query.ts";

/** The batches (OpenAI's object, plus `owner`: the key id), paged by `after` and `limit`
 * (1-1000, default 100). */
export async function listAdminBatches(ctx: RequestContext): Promise<Response> {
  const q = queryFields(ctx.url.searchParams);
  const limit = pageLimit("limit", q.string("limit", OPTIONAL), 1000, 100);
  const after = q.string("after", OPTIONAL);
  q.done();
  const store = ctx.services.batches.batches;
  const { batches, hasMore } = await store.list(null, limit, after);
  const data = await Promise.all(batches.map(async (b) => ({
    ...batchObject(b, await store.counts(b.id)),
    owner: b.owner,
  })));
  return json({ object: "list", data, has_more: hasMore });
}
