/**
 * The gateway's own model of a conversation (DESIGN §6.1): richer than any one wire format, so
 * that what a client or an upstream sends survives translation. Front doors (`api/`) parse their
 * protocol into it; back ends (`providers/`) translate it to theirs and back.
 */

/** Where a prompt prefix may be cached (Anthropic's `cache_control`). */
export interface CacheMarker {
  type: "ephemeral";
  /** Anthropic's `ttl` ("5m", "1h"), when given. */
  ttl?: string;
}

/** Text. */
export interface TextPart {
  type: "text";
  text: string;
  cache?: CacheMarker;
}

/** An image, inline or by URL (a URL is passed to back ends that fetch it themselves; the
 * gateway never fetches one). */
export interface ImagePart {
  type: "image";
  source: { kind: "data"; mediaType: string; base64: string } | { kind: "url"; url: string };
  /** OpenAI's `detail`, when given. */
  detail?: string;
  cache?: CacheMarker;
}

/**
 * A document for the model to read: a PDF, inline (base64) or at an https:// URL (passed to
 * back ends that fetch it themselves; the gateway never fetches one), or plain text. A PDF
 * needs a model with `image_input` (back ends read its pages as images too).
 */
export interface DocumentPart {
  type: "document";
  source:
    | {
      kind: "data";
      mediaType: "application/pdf";
      base64: string;
      /** Its pages, when the door counted them as it read the bytes (prompt_tokens.ts). */
      pages?: number;
    }
    | { kind: "url"; url: string }
    | { kind: "text"; text: string };
  /** Its title or file name (Anthropic's `title`, OpenAI's `filename`), when given. */
  title?: string;
  /** Anthropic's `context`: what the document is, for the model (never shown as content). */
  context?: string;
  /** Anthropic's `citations.enabled`, when given. */
  citations?: boolean;
  cache?: CacheMarker;
}

/** A call of a tool by the assistant. */
export interface ToolCallPart {
  type: "tool_call";
  id: string;
  name: string;
  /** The arguments as JSON text, as the model wrote them. */
  arguments: string;
  cache?: CacheMarker;
}

/** The answer to a tool call. */
export interface ToolResultPart {
  type: "tool_result";
  callId: string;
  content: (TextPart | ImagePart | DocumentPart)[];
  isError: boolean;
  cache?: CacheMarker;
}

/**
 * A model's reasoning: its text with the signature that lets the same provider check it when
 * it is sent back (Anthropic's `thinking`), or an opaque payload (Anthropic's
 * `redacted_thinking` data, OpenAI's encrypted reasoning). `style` names the provider style it
 * came from: a back end of another style drops the part rather than send what it cannot check.
 */
export interface ReasoningPart {
  type: "reasoning";
  text: string;
  signature?: string;
  redacted?: string;
  style?: string;
}

/** A refusal by the model (OpenAI's `refusal`). */
export interface RefusalPart {
  type: "refusal";
  text: string;
}

/** Any part of a message. */
export type Part =
  | TextPart
  | ImagePart
  | DocumentPart
  | ToolCallPart
  | ToolResultPart
  | ReasoningPart
  | RefusalPart;

/** Who speaks: `developer` is OpenAI's name for system instructions to newer models. */
export type Role = "system" | "developer" | "user" | "assistant" | "tool";

/** One message of the conversation. */
export interface Message {
  role: Role;
  parts: Part[];
  /** OpenAI's participant `name`, when given. */
  name?: string;
}

/** A function the model may call. */
export interface ToolSpec {
  name: string;
  description?: string;
  /** Its arguments' JSON schema (an object schema). */
  parameters?: Record<string, unknown>;
  /** Whether the arguments must match the schema exactly (structured outputs). */
  strict?: boolean;
  cache?: CacheMarker;
}

/** Which tool the model must or may call. */
export type ToolChoice = "none" | "auto" | "required" | { name: string };

/** The form the answer must take. */
export type OutputFormat =
  | { type: "text" }
  | { type: "json" }
  | {
    type: "json_schema";
    name: string;
    schema: Record<string, unknown>;
    strict: boolean;
    description?: string;
  };

/** How much the model may think before answering. */
export interface ReasoningOptions {
  /** OpenAI's `reasoning_effort` (or OpenRouter's `reasoning.effort`). */
  effort?: "minimal" | "low" | "medium" | "high";
  /** A budget of thinking tokens (Anthropic's `thinking.budget_tokens`, OpenRouter's
   * `reasoning.max_tokens`). */
  budgetTokens?: number;
  /** Whether thinking is off although the model could think (`thinking: {type: "disabled"}`). */
  disabled?: boolean;
}

/** `maxTokens` when neither the caller nor the model's `default_max_tokens` gives one
 * (spec §4.2). */
export const DEFAULT_MAX_TOKENS = 256;

/** The options of a request that sets none (front doors fill in what the caller sent). */
export function defaultOptions(): Options {
  return {
    maxTokens: DEFAULT_MAX_TOKENS,
    maxTokensGiven: false,
    stop: [],
    output: { type: "text" },
    tools: [],
    toolChoice: null,
  };
}

/** Generation options of a request. */
export interface Options {
  /** The most output tokens: the caller's, else the model's `default_max_tokens`, else 256. */
  maxTokens: number;
  /** Whether the caller gave `maxTokens` (back ends that have their own default may omit it). */
  maxTokensGiven: boolean;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop: string[];
  seed?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  reasoning?: ReasoningOptions;
  output: OutputFormat;
  tools: ToolSpec[];
  toolChoice: ToolChoice | null;
  parallelToolCalls?: boolean;
  user?: string;
  metadata?: Record<string, string>;
  /** How long an answer should be (OpenAI's `verbosity`, the Responses API's `text.verbosity`). */
  verbosity?: "low" | "medium" | "high";
}

/** The protocols of front doors and back ends, for fields that pass only between the same. */
export type Protocol =
  | "openai_chat"
  | "anthropic_messages"
  | "openai_responses"
  | "gemini_generate";

/** Fields of one protocol that the canonical model does not carry, kept as sent so that a back
 * end (or front door) of the same protocol passes them on unchanged. */
export interface Extras {
  protocol: Protocol;
  fields: Record<string, unknown>;
}

/** A request for a model's answer, as every front door produces it. */
export interface CanonicalRequest {
  /** The model id the caller asked for (the catalogue's, not the upstream's). */
  model: string;
  messages: Message[];
  options: Options;
  stream: boolean;
  /** Whether a stream should end with a usage report (OpenAI's `stream_options.include_usage`). */
  includeUsage: boolean;
  extras: Extras;
}
