/**
 * `POST /v1/responses`, `GET /v1/responses/{id}`, `DELETE /v1/responses/{id}` and
 * `GET /v1/responses/{id}/input_items` (OpenAI's Responses API, README "Responses API"):
 * a request is validated, its model resolved (keys, permissions, capabilities as for chat
 * completions), its previous response (if any) loaded from the caller's stored responses, and
 * answered either by an upstream with the Responses API (passthrough.ts) or through the
 * canonical model by any provider (canonical.ts).
 */
import { ApiError, unsupportedCapability } from "../../errors.ts";
import { json } from "../../http/response.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { resolve } from "../../pipeline/resolve.ts";
import { modelCall } from "../shared/model_call.ts";
import { answerCanonically } from "./canonical.ts";
import { itemsPage, readItemsQuery } from "./input_items.ts";
import { passThrough } from "./passthrough.ts";
import { parseResponsesRequest } from "./request.ts";
import { ownerOf, ResponseStore, type StoredResponse } from "./store.ts";

/** The `POST /v1/responses` handler. */
export async function createResponse(ctx: RequestContext): Promise<Response> {
  const req = parseResponsesRequest(ctx.body);
  const record = resolve(ctx, req.model);
  if (!record.chat_completions) {
    throw unsupportedCapability(
      `The model \`${record.id}\` does not support chat completions.`,
      "model",
    );
  }
  if (!record.function_calling && req.options.tools.length > 0) {
    throw unsupportedCapability(
      `The model \`${record.id}\` does not support function calling (tools).`,
      "tools",
    );
  }
  const store = new ResponseStore(ctx.services.kv);
  const owner = ownerOf(ctx.principal);
  let previous: StoredResponse | null = null;
  if (req.previousResponseId !== null) {
    previous = await store.get(req.previousResponseId, owner);
    if (previous === null) throw responseNotFound(req.previousResponseId, "previous_response_id");
  }
  const { provider, call } = modelCall(ctx, record);
  const turn = { ctx, req, record, call, previous, store, owner };
  if (provider.responses) return passThrough(turn, provider.responses);
  const hosted = req.hostedTools[0];
  if (hosted !== undefined) {
    throw unsupportedCapability(
      `The model \`${record.id}\` runs only function tools; hosted tools need a provider with the Responses API.`,
      hosted,
    );
  }
  return answerCanonically(turn, provider);
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
