/**
 * The Anthropic Messages API wire format (`POST /v1/messages`), as far as Switchyard speaks
 * it. Field names follow the wire exactly.
 */

/** Media types Anthropic accepts in an image block. */
export type ImageMediaType = "image/jpeg" | "image/png" | "image/gif" | "image/webp";

/** A prompt-cache breakpoint on a block or tool. */
export interface CacheControl {
  type: "ephemeral";
  /** "5m" (the default) or "1h". */
  ttl?: string;
}

export interface TextBlock {
  type: "text";
  /** Must be non-empty in requests. */
  text: string;
  cache_control?: CacheControl;
}

export interface ImageBlock {
  type: "image";
  source:
    | { type: "base64"; media_type: ImageMediaType; data: string }
    | { type: "url"; url: string };
  cache_control?: CacheControl;
}

/** A document: a PDF (inline or by URL) or plain text, with what Anthropic reads beside it. */
export interface DocumentBlock {
  type: "document";
  source:
    | { type: "base64"; media_type: "application/pdf"; data: string }
    | { type: "url"; url: string }
    | { type: "text"; media_type: "text/plain"; data: string };
  title?: string;
  /** What the document is, for the model (not cited). */
  context?: string;
  citations?: { enabled: boolean };
  cache_control?: CacheControl;
}

export interface ToolUseBlock {
  type: "tool_use";
  /** `toolu_...` */
  id: string;
  name: string;
  input: Record<string, unknown>;
  cache_control?: CacheControl;
}

export interface ToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content?: string | (TextBlock | ImageBlock | DocumentBlock)[];
  is_error?: boolean;
  cache_control?: CacheControl;
}

/** The model's reasoning; sent back unchanged, with its signature, in later turns. */
export interface ThinkingBlock {
  type: "thinking";
  thinking: string;
  signature: string;
}

/** Reasoning the safety systems encrypted; sent back unchanged in later turns. */
export interface RedactedThinkingBlock {
  type: "redacted_thinking";
  data: string;
}

/** Any other block a response may carry (server tools...); Switchyard skips it. */
export interface OtherBlock {
  type: string;
  [field: string]: unknown;
}

/** A block in a request message. */
export type RequestBlock =
  | TextBlock
  | ImageBlock
  | DocumentBlock
  | ToolUseBlock
  | ToolResultBlock
  | ThinkingBlock
  | RedactedThinkingBlock;

export interface Message {
  role: "user" | "assistant";
  content: string | RequestBlock[];
}

export interface Tool {
  name: string;
  description?: string;
  /** A JSON schema whose `type` is `object`. */
  input_schema: Record<string, unknown>;
  /** Structured outputs: the input must match the schema exactly. */
  strict?: boolean;
  cache_control?: CacheControl;
}

export type ToolChoice =
  | { type: "auto"; disable_parallel_tool_use?: boolean }
  | { type: "any"; disable_parallel_tool_use?: boolean }
  | { type: "tool"; name: string; disable_parallel_tool_use?: boolean }
  | { type: "none" };

/** Extended thinking: a token budget (`enabled`, up to Claude 4.6), or depth chosen by the
 * model from `output_config.effort` (`adaptive`, Claude 4.6 and later). */
export type ThinkingConfig =
  | { type: "enabled"; budget_tokens: number }
  | { type: "adaptive" }
  | { type: "disabled" };

/** Effort levels of `output_config.effort`. */
export type Effort = "low" | "medium" | "high" | "xhigh" | "max";

export interface OutputConfig {
  effort?: Effort;
  /** Structured outputs: the answer's text is JSON matching the schema. */
  format?: { type: "json_schema"; schema: Record<string, unknown> };
}

/** The request body of `POST /v1/messages`. */
export interface MessagesRequest {
  model: string;
  messages: Message[];
  max_tokens: number;
  system?: string | TextBlock[];
  stop_sequences?: string[];
  /** 0-1. */
  temperature?: number;
  top_p?: number;
  top_k?: number;
  tools?: Tool[];
  tool_choice?: ToolChoice;
  thinking?: ThinkingConfig;
  output_config?: OutputConfig;
  metadata?: { user_id?: string };
  stream?: boolean;
}

export type StopReason =
  | "end_turn"
  | "max_tokens"
  | "stop_sequence"
  | "tool_use"
  | "pause_turn"
  | "refusal"
  | "model_context_window_exceeded";

export interface Usage {
  /** Input tokens after the last cache breakpoint (cached ones not included). */
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number } | null;
}

/** Why the model refused (`stop_reason: "refusal"`). */
export interface StopDetails {
  type: "refusal";
  category?: string | null;
  explanation?: string | null;
}

/** A response content block. */
export type ResponseBlock =
  | TextBlock
  | ToolUseBlock
  | ThinkingBlock
  | RedactedThinkingBlock
  | OtherBlock;

/** The response of `POST /v1/messages` without `stream`. */
export interface MessagesResponse {
  /** `msg_...` */
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: ResponseBlock[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  stop_details?: StopDetails | null;
  usage: Usage;
}

/** Error types of Anthropic error bodies and `error` stream events. */
export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "billing_error"
  | "permission_error"
  | "not_found_error"
  | "request_too_large"
  | "rate_limit_error"
  | "api_error"
  | "timeout_error"
  | "overloaded_error";

/** The body of an error response, and the data of an `error` stream event. */
export interface ErrorResponse {
  type: "error";
  error: { type: ErrorType | string; message: string };
  request_id?: string;
}

export interface MessageStartEvent {
  type: "message_start";
  /** The message with empty `content`; its usage holds the input tokens. */
  message: MessagesResponse;
}

export interface ContentBlockStartEvent {
  type: "content_block_start";
  index: number;
  /** A thinking block starts with empty `thinking` and `signature`. */
  content_block: ResponseBlock;
}

export interface TextDelta {
  type: "text_delta";
  text: string;
}

export interface InputJsonDelta {
  type: "input_json_delta";
  partial_json: string;
}

export interface ThinkingDelta {
  type: "thinking_delta";
  thinking: string;
}

/** The whole signature of a thinking block, just before its `content_block_stop`. */
export interface SignatureDelta {
  type: "signature_delta";
  signature: string;
}

/** Other deltas (citations...); Switchyard skips them. */
export interface OtherDelta {
  type: string;
  [field: string]: unknown;
}

export interface ContentBlockDeltaEvent {
  type: "content_block_delta";
  index: number;
  delta: TextDelta | InputJsonDelta | ThinkingDelta | SignatureDelta | OtherDelta;
}

export interface ContentBlockStopEvent {
  type: "content_block_stop";
  index: number;
}

export interface MessageDeltaEvent {
  type: "message_delta";
  delta: {
    stop_reason: StopReason | null;
    stop_sequence: string | null;
    stop_details?: StopDetails | null;
  };
  /** Cumulative: `output_tokens` so far, and (newer API versions) the input counts. */
  usage: Partial<Usage>;
}

export interface MessageStopEvent {
  type: "message_stop";
}

export interface PingEvent {
  type: "ping";
}

/** The data of one SSE event of a streamed message; the SSE `event:` name equals `type`. */
export type StreamEvent =
  | MessageStartEvent
  | ContentBlockStartEvent
  | ContentBlockDeltaEvent
  | ContentBlockStopEvent
  | MessageDeltaEvent
  | MessageStopEvent
  | PingEvent
  | ErrorResponse;
