/** The shapes of Bedrock's Converse API (`/model/{modelId}/converse`, `/converse-stream`) that
 * the gateway writes. */

/** Where a cached prompt prefix ends (`ttl`: `5m` or `1h`). */
export interface CachePoint {
  cachePoint: { type: "default"; ttl?: string };
}

/** An image's bytes (base64 in JSON) and format. */
export interface ImageBlock {
  image: { format: "png" | "jpeg" | "gif" | "webp"; source: { bytes: string } };
}

export interface TextBlock {
  text: string;
}

/** A document: a PDF's bytes (base64 in JSON) or plain text, under a name unique in the
 * request. */
export interface DocumentBlock {
  document: {
    format: "pdf" | "txt";
    /** 1-200 characters: alphanumerics, single whitespace, hyphens, parentheses, brackets. */
    name: string;
    source: { bytes: string } | { text: string };
    context?: string;
    citations?: { enabled: boolean };
  };
}

export interface ToolUseBlock {
  toolUse: { toolUseId: string; name: string; input: unknown };
}

export interface ToolResultBlock {
  toolResult: {
    toolUseId: string;
    content: (TextBlock | ImageBlock | DocumentBlock)[];
    status?: "success" | "error";
  };
}

/** Reasoning as the model gave it: its text with the signature, or the encrypted payload
 * (base64). */
export interface ReasoningBlock {
  reasoningContent:
    | { reasoningText: { text: string; signature?: string } }
    | { redactedContent: string };
}

/** A content block of a message. */
export type ContentBlock =
  | TextBlock
  | ImageBlock
  | DocumentBlock
  | ToolUseBlock
  | ToolResultBlock
  | ReasoningBlock
  | CachePoint;

export interface ConverseMessage {
  role: "user" | "assistant";
  content: ContentBlock[];
}

export interface ToolSpecBlock {
  toolSpec: { name: string; description?: string; inputSchema: { json: unknown } };
}

export type ToolChoice = { auto: Record<never, never> } | { any: Record<never, never> } | {
  tool: { name: string };
};

/** The body of a Converse or ConverseStream request. */
export interface ConverseRequest {
  messages: ConverseMessage[];
  system?: (TextBlock | CachePoint)[];
  inferenceConfig: {
    maxTokens: number;
    temperature?: number;
    topP?: number;
    stopSequences?: string[];
  };
  toolConfig?: { tools: (ToolSpecBlock | CachePoint)[]; toolChoice?: ToolChoice };
  /** Fields of the model's own request body (Claude's `thinking`, `top_k`). */
  additionalModelRequestFields?: Record<string, unknown>;
}
