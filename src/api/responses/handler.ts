/**
 * `POST /v1/responses`, `GET /v1/responses/{id}`, `DELETE /v1/responses/{id}` and
 * `GET /v1/responses/{id}/input_items` (OpenAI's Responses API, README "Responses API"):
 * a request is validated, its model resolved, and answered through the one model-call path
 * (`api/shared/model_call.ts`), by its door (door.ts): its previous response (if any) loaded
 * from the caller's stored responses, and the call passed through to an upstream with the
 * Responses API (passthrough.ts) or answered through the canonical model by any provider.
 */
import { ApiError } from "../../errors.ts";
import { json } from "../../http/response.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { callChat, openModel } from "../shared/model_call.ts";
import { ResponsesDoor } from "./door.ts";
import { itemsPage, readItemsQuery } from "./input_items.ts";
import { parseResponsesRequest } from "./request.ts";
import { ownerOf, ResponseStore, type StoredResponse } from "./store.ts";

/** The `POST /v1/responses` handler. */
export function createResponse(ctx: RequestContext): Promise<Response> {
  const req = parseResponsesRequest(ctx.body);
  const target = openModel(ctx, req.model);
  const store = new ResponseStore(ctx.services.kv);
  const owner = ownerOf(ctx.principal);
  const previous = async (id: string) => {
    const stored = await store.get(id, owner);
    if (stored === null) throw responseNotFound(id, "previous_response_id");
    return stored;
  };
  const door = new ResponsesDoor(ctx, req, previous);
  return callChat(ctx, target, door);
}

/** The `GET /v1/responses/{id}` handler: a stored response of the caller's. */
export async function getResponse(ctx: RequestContext): Promise<Response> {
  const stored = await storedOf(ctx);
  return json(stored.response);
}

/** The `GET /v1/responses/{id}/input_items` handler: a page of the stored input items (see
 * input_items.ts). */
export async function listInputItems(ctx: RequestContext): Promise<Response> {
  const query = readItemsQuery(ctx.url.searchParams);
  const stored = await storedOf(ctx);
  return json(itemsPage(stored.input, query));
}

/** The `DELETE /v1/responses/{id}` handler. */
export async function deleteResponse(ctx: RequestContext): Promise<Response> {
  const id = ctx.params.id!;
  const deleted = await new ResponseStore(ctx.services.kv).delete(id, ownerOf(ctx.principal));
  if (!deleted) throw responseNotFound(id, "response_id");
  return json({ id, object: "response.deleted", deleted: true });
}

async function storedOf(ctx: RequestContext): Promise<StoredResponse> {
  const id = ctx.params.id!;
  const stored = await new ResponseStore(ctx.services.kv).get(id, ownerOf(ctx.principal));
  if (stored === null) throw responseNotFound(id, "response_id");
  return stored;
}

/** 404 for a response that does not exist, has expired or belongs to another caller (the
 * same answer for each, so that ids of others are not revealed). */
function responseNotFound(id: string, param: string): ApiError {
  return new ApiError(
    404,
    "invalid_request_error",
    `Response with id '${id.slice(0, 100)}' not found.`,
    { code: "response_not_found", param },
  );
}
