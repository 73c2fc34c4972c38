import { noUses, type Uses } from "../../canonical/uses.ts";
import { isObject } from "../../validation/reader.ts";
import type { ResponsesRequest } from "./request.ts";

/** Input items that are tool calls or their outputs. */
const TOOL_ITEM = /^(function_call|custom_tool_call)/;
/** A text document's data URL: it needs no document input. */
const TEXT_DATA_URL = /^data:text\/plain[;,]/i;

/**
 * Where a Responses request uses images, PDF documents, tool items and hosted tools, read from
 * its input items as sent (no further than an upstream with the Responses API reads them: the
 * items' shapes are checked where the gateway itself answers): `input_image` parts,
 * `input_file` parts but those of text (in messages and in tool outputs), function and custom
 * tool call and output items, and
 * hosted tools (`web_search`...), which only a back end with the Responses API runs.
 */
export function responsesUses(req: ResponsesRequest): Uses {
  const uses = noUses();
  uses.hostedTools.push(...req.hostedTools);
  const input = req.input.value;
  if (!Array.isArray(input)) return uses;
  input.forEach((item: unknown, i) => {
    if (!isObject(item)) return;
    if (TOOL_ITEM.test(String(item.type))) uses.toolUses.push(`input[${i}]`);
    // A message's parts, or a tool output's when it is an array of them.
    const field = Array.isArray(item.content) ? "content" : "output";
    const parts = item[field];
    if (!Array.isArray(parts)) return;
    parts.forEach((part: unknown, j) => {
      if (!isObject(part)) return;
      const path = `input[${i}].${field}[${j}]`;
      if (part.type === "input_image") uses.images.push(path);
      else if (part.type === "input_file" && !TEXT_DATA_URL.test(String(part.file_data))) {
        uses.documents.push(path);
      }
    });
  });
  return uses;
}
