/**
 * `GET /v1/responses/{id}/input_items` (OpenAI's `ResponseItemList`): a page of a stored
 * response's input items, `limit` (1 to 100, default 20) of them in `order` (`asc`, or `desc`
 * by default) after the item `after`, with `first_id`, `last_id` and `has_more`. Items are
 * listed as OpenAI lists them whatever form they were sent in: a shorthand message
 * (`{"role": "user", "content": "hi"}`) as a typed `message` with content parts, and messages,
 * function calls and their outputs with a `status`. The stored items stay as sent (the
 * conversation to continue from is kept apart, in the history).
 */
import { quote } from "../../quote.ts";
import { invalidValue } from "../../validation/error.ts";
import { isObject, OPTIONAL, Reader } from "../../validation/reader.ts";
import { pageLimit, queryFields } from "../../validation/query.ts";
import { outputText, type WireObject } from "./output.ts";
import { INCLUDES } from "./request.ts";

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
const ORDERS = ["asc", "desc"] as const;
/** `include` as sent by hand, and as the SDKs send an array (`include[]=a&include[]=b`). */
const INCLUDE_PARAMS = ["include", "include[]"] as const;

/** What a listing asks for. */
export interface ItemsQuery {
  limit: number;
  order: (typeof ORDERS)[number];
  /** The id of the item the page starts after, or `null` for the first page. */
  after: string | null;
}

/**
 * Reads the query parameters (each one's first value; every value of `include`, which is
 * checked and changes nothing: image URLs are always listed) and rejects any other parameter
 * (`unknown_parameter`).
 */
export function readItemsQuery(params: URLSearchParams): ItemsQuery {
  const q = queryFields(params, INCLUDE_PARAMS);
  const limit = pageLimit("limit", q.string("limit", OPTIONAL), MAX_LIMIT, DEFAULT_LIMIT);
  const order = q.oneOf("order", ORDERS, OPTIONAL) ?? "desc";
  const after = q.string("after", OPTIONAL) ?? null;
  for (const name of INCLUDE_PARAMS) {
    if (q.optional(name) === undefined) continue;
    for (const value of params.getAll(name)) new Reader(value, null, name, false).oneOf(INCLUDES);
  }
  q.done();
  return { limit, order, after };
}

/** The page of `items` (a stored response's input items, in the order sent) that `query`
 * asks for; an `after` that is not one of their ids is a 400. */
export function itemsPage(items: readonly WireObject[], query: ItemsQuery): WireObject {
  const ordered = query.order === "asc" ? items : [...items].reverse();
  let start = 0;
  if (query.after !== null) {
    const at = ordered.findIndex((item) => item.id === query.after);
    if (at < 0) {
      throw invalidValue(
        "after",
        `expected the id of an input item of this response, but got ${quote(query.after)}`,
      );
    }
    start = at + 1;
  }
  const data = ordered.slice(start, start + query.limit).map(listedItem);
  return {
    object: "list",
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: start + query.limit < ordered.length,
  };
}

/** An input item as OpenAI lists it (an item of a type the gateway does not model, as sent). */
function listedItem(item: WireObject): WireObject {
  const type = item.type ?? "message";
  if (type === "message") {
    const assistant = item.role === "assistant";
    return {
      ...item,
      type: "message",
      content: typeof item.content === "string"
        ? [assistant ? outputText(item.content) : { type: "input_text", text: item.content }]
        : assistant && Array.isArray(item.content)
        ? item.content.map(listedOutputPart)
        : item.content,
      status: item.status ?? "completed",
    };
  }
  if (type === "function_call" || type === "function_call_output") {
    return { ...item, status: item.status ?? "completed" };
  }
  return item;
}

/** An assistant message's content part as OpenAI lists it: `output_text` with its
 * `annotations` and `logprobs`. */
function listedOutputPart(part: unknown): unknown {
  if (!isObject(part) || part.type !== "output_text" || typeof part.text !== "string") return part;
  return { ...outputText(part.text), ...part };
}
