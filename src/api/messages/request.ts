/**
 * `POST /v1/messages` (and `/v1/messages/count_tokens`) bodies into canonical requests, every
 * field checked by the validation readers so that a mistake is a 400 naming its path (answered
 * in Anthropic's shape: `messages.0.content.1: ...`). Fields the canonical model does not carry
 * (`service_tier`, `container`, `context_management`...) are kept as extras of protocol
 * `anthropic_messages`, for an Anthropic upstream; what Claude Code sends beyond the GA API
 * (`role: "system"` messages mid-conversation, `defer_loading` tools, `thinking.display`) is
 * read as content.ts and tools.ts say, never refused.
 */
import type {
  CanonicalRequest,
  Message,
  Options,
  OutputFormat,
  ReasoningOptions,
} from "../../canonical/conversation.ts";
import { DEFAULT_IMAGE_CAPS } from "../../config/limits.ts";
import type { ImageCaps } from "../../http/image_data_url.ts";
import { type Fields, OPTIONAL, readRequest } from "../../validation/reader.ts";
import { decodeImages, type PendingImages } from "../shared/images.ts";
import { parseCacheControl } from "../shared/cache_control.ts";
import { parseMessages, parseSystem } from "./content.ts";
import { parseToolChoice, parseTools } from "./tools.ts";
import { noUses, type Uses } from "../../canonical/uses.ts";

/** A parsed Messages request and what it uses. */
export interface ParsedMessages {
  req: CanonicalRequest;
  uses: Uses;
  /** Names of what the request carries inside its messages and tools that only an Anthropic
   * upstream can act on (`defer_loading`, `tool_addition`...): a back end reached through the
   * canonical model reports them as dropped, with the top-level extras. */
  dropped: Set<string>;
}

const RULES = {
  model: { nonEmpty: true },
  maxTokens: { min: 1 },
  /** Anthropic's sampling ranges. */
  unit: { optional: true, min: 0, max: 1 },
  topK: { optional: true, min: 0 },
  stop: { optional: true },
  /** Anthropic's least thinking budget. */
  budget: { min: 1024 },
} as const;
const THINKING_TYPES = ["enabled", "disabled", "adaptive"] as const;
const DISPLAYS = ["summarized", "omitted"] as const;
const EFFORTS = ["low", "medium", "high", "xhigh", "max"] as const;
const FORMAT_TYPES = ["json_schema"] as const;

/** Anthropic's efforts as the canonical ones (the two above `high` are `high` elsewhere). */
const EFFORT_OF: Record<typeof EFFORTS[number], NonNullable<ReasoningOptions["effort"]>> = {
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "high",
  max: "high",
};

/**
 * Checks a parsed JSON body (its images within `caps`) and returns the canonical request.
 * `countOnly` reads a `count_tokens` body, which has no `max_tokens` nor `stream`.
 */
export function parseMessagesRequest(
  body: Record<string, unknown>,
  caps: Readonly<ImageCaps> = DEFAULT_IMAGE_CAPS,
  countOnly = false,
): ParsedMessages {
  const f = readRequest(body);
  const uses = noUses();
  const pending: PendingImages = { fields: [], parts: [] };
  const dropped = new Set<string>();
  const model = f.string("model", RULES.model);
  const maxTokens = countOnly ? undefined : f.integer("max_tokens", RULES.maxTokens);
  const messages = [...parseSystem(f), ...parseMessages(f, { pending, uses, dropped })];
  markLast(messages, f);
  decodeImages(pending, caps);
  const tools = parseTools(f, uses, dropped);
  const serverTools = uses.hostedTools.length > 0;
  const choice = parseToolChoice(f.object("tool_choice", OPTIONAL), tools, serverTools);
  const options: Options = {
    maxTokens: maxTokens ?? 1,
    maxTokensGiven: maxTokens !== undefined,
    stop: (f.array("stop_sequences", RULES.stop) ?? []).map((s) => s.string()),
    output: parseOutput(f),
    tools,
    toolChoice: choice.choice,
  };
  if (choice.parallel !== undefined) options.parallelToolCalls = choice.parallel;
  setIf(options, "temperature", f.number("temperature", RULES.unit));
  setIf(options, "topP", f.number("top_p", RULES.unit));
  setIf(options, "topK", f.integer("top_k", RULES.topK));
  setIf(options, "user", parseUser(f));
  const reasoning = parseThinking(f, maxTokens);
  if (reasoning) options.reasoning = reasoning;
  const stream = countOnly ? false : f.boolean("stream", OPTIONAL) ?? false;
  return {
    req: {
      model,
      messages,
      options,
      stream,
      includeUsage: stream,
      extras: { protocol: "anthropic_messages", fields: f.extras() },
    },
    uses,
    dropped,
  };
}

function setIf<K extends keyof Options>(options: Options, key: K, value: Options[K] | undefined) {
  if (value !== undefined) options[key] = value;
}

/** The top-level `cache_control`: Anthropic puts it on the last block that can take one. */
function markLast(messages: Message[], f: Fields): void {
  const cache = parseCacheControl(f.object("cache_control", OPTIONAL));
  if (!cache) return;
  const parts = messages.at(-1)?.parts ?? [];
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i]!;
    if (part.type !== "reasoning" && part.type !== "refusal") {
      part.cache = cache;
      return;
    }
  }
}

/** `metadata`: only `user_id`, the canonical `user`. */
function parseUser(f: Fields): string | undefined {
  const metadata = f.object("metadata", OPTIONAL);
  if (metadata === undefined) return undefined;
  const user = metadata.string("user_id", { optional: true, nullable: true });
  metadata.done();
  return user ?? undefined;
}

/** `thinking` (a budget, adaptive or off) with `output_config.effort`, as reasoning options. */
function parseThinking(f: Fields, maxTokens: number | undefined): ReasoningOptions | undefined {
  const config = f.object("output_config", OPTIONAL);
  const effort = config?.oneOf("effort", EFFORTS, { optional: true, nullable: true });
  const thinking = f.object("thinking", OPTIONAL);
  const type = thinking?.oneOf("type", THINKING_TYPES);
  thinking?.oneOf("display", DISPLAYS, { optional: true, nullable: true });
  if (type === "disabled") return { disabled: true };
  const reasoning: ReasoningOptions = {};
  if (effort) reasoning.effort = EFFORT_OF[effort];
  if (type === "enabled") {
    const budget = thinking!.integer("budget_tokens", RULES.budget);
    if (maxTokens !== undefined && budget >= maxTokens) {
      throw thinking!.get("budget_tokens").invalid(
        `expected less than max_tokens (${maxTokens}), but got ${budget}`,
      );
    }
    reasoning.budgetTokens = budget;
  }
  if (type === "adaptive" && reasoning.effort === undefined) reasoning.effort = "medium";
  return Object.keys(reasoning).length > 0 ? reasoning : undefined;
}

/** `output_config.format` (or the beta's top-level `output_format`): a JSON schema the
 * answer's text must match. */
function parseOutput(f: Fields): OutputFormat {
  const format = f.object("output_config", OPTIONAL)?.object("format", {
    optional: true,
    nullable: true,
  }) ?? f.object("output_format", OPTIONAL);
  if (!format) return { type: "text" };
  format.oneOf("type", FORMAT_TYPES);
  const schema = format.get("schema").nullAsValue().object({ expected: "a JSON schema object" });
  return { type: "json_schema", name: "output", schema: schema.value, strict: true };
}
