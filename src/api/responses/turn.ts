/** What the Responses door's two paths (canonical.ts, passthrough.ts) share: the turn being
 * answered, its input items, and storing the answer. */
import type { ModelRecord } from "../../catalogue/model.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import type { CallContext } from "../../providers/types.ts";
import type { WireObject } from "./output.ts";
import type { ResponsesRequest } from "./request.ts";
import type { ResponseStore, StoredResponse } from "./store.ts";

/** One `POST /v1/responses` once its model and previous response are known. */
export interface Turn {
  ctx: RequestContext;
  req: ResponsesRequest;
  record: ModelRecord;
  call: CallContext;
  /** The stored response `previous_response_id` names, if any. */
  previous: StoredResponse | null;
  store: ResponseStore;
  /** Who the stored response will belong to (see store.ts). */
  owner: string;
}

/** The request's `input` as items (a string as one user message). */
export function inputItems(input: unknown): WireObject[] {
  return typeof input === "string"
    ? [{ type: "message", role: "user", content: [{ type: "input_text", text: input }] }]
    : input as WireObject[];
}

/**
 * Stores the response with the conversation to continue from (the previous history, this
 * input, this output) when the request asked for `store`; a failure or a record over the size
 * bound is logged, and the answer goes out all the same.
 */
export async function keep(
  turn: Turn,
  response: WireObject,
  input: WireObject[],
  output: WireObject[],
): Promise<void> {
  if (!turn.req.store) return;
  const id = response.id as string;
  const history = [...turn.previous?.history ?? [], ...input, ...output];
  // Input items are listed with ids, as OpenAI lists them.
  const hex = id.replace(/^resp_/, "");
  const listed = input.map((item, i) =>
    typeof item.id === "string"
      ? item
      : { id: `in_${hex}${i.toString(16).padStart(4, "0")}`, ...item }
  );
  const { logger } = turn.ctx.services;
  try {
    const stored = await turn.store.put(id, turn.owner, { response, input: listed, history });
    if (!stored) {
      logger.warn(
        `response ${id} is too large (or its id too long) to store; it cannot be continued or retrieved`,
      );
    }
  } catch (e) {
    logger.error(`could not store response ${id}`, e, turn.ctx.requestId);
  }
}
