/**
 * The OpenAI API style: Switchyard's public API (spec §2) and the wire format of
 * `openai`-style upstreams. Field names follow the wire exactly.
 */

/** A model object (spec §2.1) with Switchyard's optional extras. */
export interface Model {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
  chat_completions: boolean;
  moderation: boolean;
  image_input: boolean;
  function_calling: boolean;
  featured: boolean;
  labels: string[];
  access: "public" | "key" | "preview";
  context_length?: number;
  default_moderation?: true;
  image_generation?: {
    sizes: string[];
    max_n: number;
    guidance_scale: boolean;
    num_inference_steps: boolean;
  };
}

/** The model list (spec §2.2). */
export interface ModelList {
  object: "list";
  data: Model[];
}

export interface TextPart {
  type: "text";
  text: string;
}

export interface ImagePart {
  type: "image_url";
  image_url: { url: string; detail?: "auto" | "low" | "high" };
}

export type ContentPart = TextPart | ImagePart;

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface SystemMessage {
  role: "system" | "developer";
  content: string | TextPart[];
  name?: string;
}

export interface UserMessage {
  role: "user";
  content: string | ContentPart[];
  name?: string;
}

export interface AssistantMessage {
  role: "assistant";
  content: string | TextPart[] | null;
  tool_calls?: ToolCall[];
  name?: string;
}

export interface ToolMessage {
  role: "tool";
  content: string | TextPart[];
  tool_call_id: string;
}

export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** A JSON-schema object as sent in `function.parameters`. */
export type JsonSchema = Record<string, unknown>;

export interface Tool {
  type: "function";
  function: { name: string; description?: string; parameters?: JsonSchema; strict?: boolean };
}

export type ToolChoice =
  | "none"
  | "auto"
  | "required"
  | { type: "function"; function: { name: string } };

/** A chat completion request after validation (spec §4.2), defaults filled in. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  temperature: number;
  max_tokens: number;
  stream: boolean;
  include_usage: boolean;
  /** Empty when no stop sequences were given. */
  stop: string[];
  /** Empty when no tools were given. */
  tools: Tool[];
  /** `null` when the caller sent none. */
  tool_choice: ToolChoice | null;
  /** Whether the caller sent `max_tokens`/`max_completion_tokens` (else the default 256 applies). */
  max_tokens_given: boolean;
  /** Whether the caller sent `temperature`. */
  temperature_given: boolean;
  /** Other OpenAI sampling fields passed through to OpenAI-style upstreams as sent. */
  extra: Record<string, unknown>;
}

export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter";

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ResponseMessage {
  role: "assistant";
  content: string | null;
  refusal: null;
  tool_calls?: ToolCall[];
}

export interface Choice {
  index: number;
  message: ResponseMessage;
  logprobs: null;
  finish_reason: FinishReason;
}

/** A chat completion (spec §2.5). */
export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: Choice[];
  usage: Usage;
  system_fingerprint?: string | null;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: "function";
  function?: { name?: string; arguments?: string };
}

export interface Delta {
  role?: "assistant";
  content?: string | null;
  refusal?: null;
  tool_calls?: ToolCallDelta[];
}

export interface ChunkChoice {
  index: number;
  delta: Delta;
  logprobs: null;
  finish_reason: FinishReason | null;
}

/** A chat completion chunk (spec §2.6); `usage` only on the final usage chunk. */
export interface ChatChunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  choices: ChunkChoice[];
  usage?: Usage | null;
  system_fingerprint?: string | null;
}

export type ModerationScores = Record<string, number>;
export type ModerationFlags = Record<string, boolean>;

/** One moderation result (spec §2.7). */
export interface ModerationResult {
  flagged: boolean;
  categories: ModerationFlags;
  category_scores: ModerationScores;
}

/** The moderation response (spec §2.7). */
export interface ModerationResponse {
  id: string;
  model: string;
  results: ModerationResult[];
}

/** A validated moderation request (spec §4.3). */
export interface ModerationRequest {
  model: string;
  input: string[];
  /** Data URLs, already checked to be images. */
  input_images: string[];
}

/** A validated image generation request (spec §4.4). */
export interface ImageRequest {
  model: string;
  prompt: string;
  n: number;
  size: string;
  width: number;
  height: number;
  guidance_scale: number | null;
  num_inference_steps: number | null;
}

/** The image generation result (spec §2.8); `b64_json` only when the caller asked for it. */
export interface ImageResponse {
  created: number;
  data: ({ url: string } | { b64_json: string })[];
}
