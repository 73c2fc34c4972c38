import { noUses, type Uses } from "../../canonical/uses.ts";
import { isObject } from "../../validation/reader.ts";
import type { ResponsesRequest } from "./request.ts";

/** Input items that are tool calls or their outputs. */
const TOOL_ITEM = /^(function_call|custom_tool_call)/;

/**
 * Where a Responses request uses images, tool items and hosted tools, read from its input
 * items as sent (no further than an upstream with the Responses API reads them: the items'
 * shapes are checked where the gateway itself answers): `input_image` parts, function and
 * custom tool call and output items, and hosted tools (`web_search`...), which only a back
 * end with the Responses API runs.
 */
export function responsesUses(req: ResponsesRequest): Uses {
  const uses = noUses();
  uses.hostedTools.push(...req.hostedTools);
  const input = req.input.value;
  if (!Array.isArray(input)) return uses;
  input.forEach((item: unknown, i) => {
    if (!isObject(item)) return;
    if (TOOL_ITEM.test(String(item.type))) uses.toolUses.push(`input[${i}]`);
    const content = item.content;
    if (!Array.isArray(content)) return;
    content.forEach((part: unknown, j) => {
      if (isObject(part) && part.type === "input_image") {
        uses.images.push(`input[${i}].content[${j}]`);
      }
    });
  });
  return uses;
}
