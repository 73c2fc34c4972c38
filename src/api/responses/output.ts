/**
 * Canonical results as Responses objects (OpenAI's `Response`): the parts as output items - a
 * `reasoning` item per reasoning part (its text as the summary, and the part itself in
 * `encrypted_content` when asked for: see reasoning_envelope.ts), one assistant `message` for
 * each run of text and refusal parts (a content part each), a `function_call` (with its
 * `namespace`, for a namespaced tool) or `custom_tool_call` per tool call, as the request
 * declared the tool (tool_map.ts) - with the status, incomplete details and usage, and the
 * request's settings echoed.
 */
import type { Part, ReasoningPart } from "../../canonical/conversation.ts";
import type { FinishReason, Usage } from "../../canonical/result.ts";
import { encodeReasoning } from "./reasoning_envelope.ts";
import type { ResponseEcho } from "./request.ts";
import { customInput, type ToolMap, type WireTool } from "./tool_map.ts";

/** A JSON object of the wire format. */
export type WireObject = Record<string, unknown>;

/** What a Response object says besides its output. */
export interface ResponseHead {
  id: string;
  createdAt: number;
  /** The gateway's model id. */
  model: string;
  previousResponseId: string | null;
  store: boolean;
  echo: ResponseEcho;
  /** The request's tools, by canonical name. */
  tools: ToolMap;
}

/** How a response ended, as a Response object says it. */
export interface Ending {
  status: "completed" | "incomplete" | "failed" | "in_progress";
  incompleteReason?: "max_output_tokens" | "content_filter";
  error?: { code: string; message: string };
  completedAt?: number;
}

/** A new response id: `resp_` and 32 hex digits. */
export function responseId(): string {
  return "resp_" + crypto.randomUUID().replaceAll("-", "");
}

/** The id of the output item at `index` of a response (`msg_...`, `fc_...`, `ctc_...`,
 * `rs_...`). */
export function itemId(
  prefix: "msg" | "fc" | "ctc" | "rs",
  responseId: string,
  index: number,
): string {
  return `${prefix}_${responseId.replace(/^resp_/, "")}${index.toString(16).padStart(4, "0")}`;
}

/** How a finish reason ends a response (a refusal is a completed answer). */
export function endingOf(finish: FinishReason, parts: readonly Part[]): Ending {
  if (finish === "length") return { status: "incomplete", incompleteReason: "max_output_tokens" };
  if (finish === "content_filter" && !parts.some((p) => p.type === "refusal")) {
    return { status: "incomplete", incompleteReason: "content_filter" };
  }
  if (finish === "error") {
    return { status: "failed", error: { code: "server_error", message: "The model failed." } };
  }
  return { status: "completed" };
}

/** An output `reasoning` item. */
export function reasoningItem(
  id: string,
  part: ReasoningPart,
  withContent: boolean,
): WireObject {
  const item: WireObject = {
    id,
    type: "reasoning",
    summary: part.text === "" ? [] : [{ type: "summary_text", text: part.text }],
  };
  if (withContent) item.encrypted_content = encodeReasoning(part);
  return item;
}

/** An `output_text` content part. */
export function outputText(text: string): WireObject {
  return { type: "output_text", text, annotations: [], logprobs: [] };
}

/** A `refusal` content part. */
export function refusalPart(text: string): WireObject {
  return { type: "refusal", refusal: text };
}

/** The item id prefix of a call of `tool`. */
export function callPrefix(tool: WireTool): "fc" | "ctc" {
  return tool.kind === "custom" ? "ctc" : "fc";
}

/** A `function_call` item, or a `custom_tool_call` item (its `input` read from the canonical
 * arguments), for a call of `tool`. */
export function toolCallItem(
  id: string,
  callId: string,
  tool: WireTool,
  args: string,
  status: "in_progress" | "completed" | "incomplete",
): WireObject {
  const namespace = tool.namespace === undefined ? {} : { namespace: tool.namespace };
  if (tool.kind === "custom") {
    return {
      id,
      type: "custom_tool_call",
      call_id: callId,
      ...namespace,
      name: tool.name,
      input: customInput(args),
    };
  }
  return {
    id,
    type: "function_call",
    status,
    arguments: args,
    call_id: callId,
    ...namespace,
    name: tool.name,
  };
}

/**
 * The output items for a result's parts, its calls named as `tools` declares them.
 * `withContent` puts each reasoning part in its item's `encrypted_content` (when the client
 * included it, and always in the stored history); `incomplete` marks the last item, a message
 * or a function call, as cut short.
 */
export function renderOutput(
  parts: readonly Part[],
  id: string,
  tools: ToolMap,
  withContent: boolean,
  incomplete = false,
): WireObject[] {
  const items: WireObject[] = [];
  let message: WireObject[] | null = null;
  for (const part of parts) {
    if (part.type === "text" || part.type === "refusal") {
      if (message === null) {
        message = [];
        items.push({
          id: itemId("msg", id, items.length),
          type: "message",
          status: "completed",
          role: "assistant",
          content: message,
        });
      }
      message.push(part.type === "text" ? outputText(part.text) : refusalPart(part.text));
      continue;
    }
    message = null;
    const index = items.length;
    if (part.type === "reasoning") {
      items.push(reasoningItem(itemId("rs", id, index), part, withContent));
    } else if (part.type === "tool_call") {
      const tool = tools.wire(part.name);
      const item = itemId(callPrefix(tool), id, index);
      items.push(toolCallItem(item, part.id, tool, part.arguments, "completed"));
    }
  }
  if (incomplete) {
    const last = items.at(-1);
    if (last?.type === "message" || last?.type === "function_call") last.status = "incomplete";
  }
  return items;
}

/** OpenAI's usage object for a canonical usage. */
export function renderUsage(usage: Usage): WireObject {
  return {
    input_tokens: usage.input,
    input_tokens_details: {
      cached_tokens: usage.cachedInput ?? 0,
      cache_write_tokens: usage.cacheWrite ?? 0,
    },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
    total_tokens: usage.input + usage.output,
  };
}

/** The Response object. */
export function renderResponse(
  head: ResponseHead,
  ending: Ending,
  output: WireObject[],
  usage: Usage | null,
): WireObject {
  const { echo } = head;
  return {
    id: head.id,
    object: "response",
    created_at: head.createdAt,
    status: ending.status,
    background: false,
    completed_at: ending.completedAt ?? null,
    error: ending.error ?? null,
    incomplete_details: ending.incompleteReason ? { reason: ending.incompleteReason } : null,
    instructions: echo.instructions,
    max_output_tokens: echo.max_output_tokens,
    max_tool_calls: null,
    model: head.model,
    output,
    parallel_tool_calls: echo.parallel_tool_calls,
    previous_response_id: head.previousResponseId,
    reasoning: echo.reasoning,
    service_tier: "default",
    store: head.store,
    temperature: echo.temperature,
    text: echo.text,
    tool_choice: echo.tool_choice,
    tools: echo.tools,
    top_logprobs: 0,
    top_p: echo.top_p,
    truncation: echo.truncation,
    metadata: echo.metadata,
    // The schema has no null for these: a response in progress has no usage yet.
    ...(usage === null ? {} : { usage: renderUsage(usage) }),
    ...(echo.user === null ? {} : { user: echo.user }),
  };
}
