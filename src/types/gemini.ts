/**
 * Gemini's `generateContent` wire format (v1beta) as the Gemini front door answers it:
 * responses, stream chunks, token counts and models, as documented (googleapis/js-genai
 * `src/types.ts`; ai.google.dev/api/generate-content).
 */

/** One piece of a content: one data field, with a thought flag and signature beside. */
export interface GeminiPart {
  text?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: { id?: string; name: string; args: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response: Record<string, unknown> };
  /** A thought summary rather than answer text. */
  thought?: boolean;
  /** Opaque (base64); must come back on the same part in the next turn. */
  thoughtSignature?: string;
}

/** A turn of the conversation. */
export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

/** A candidate's `finishReason`. */
export type GeminiFinishReason =
  | "STOP"
  | "MAX_TOKENS"
  | "SAFETY"
  | "RECITATION"
  | "OTHER"
  | "BLOCKLIST"
  | "PROHIBITED_CONTENT"
  | "SPII"
  | "MALFORMED_FUNCTION_CALL"
  | "UNEXPECTED_TOOL_CALL"
  | "TOO_MANY_TOOL_CALLS";

/** One candidate answer (the gateway answers one: `candidateCount` 1). */
export interface GeminiCandidate {
  content: GeminiContent;
  finishReason?: GeminiFinishReason;
  index: number;
}

/** Tokens of a modality. */
export interface ModalityTokenCount {
  modality: "TEXT" | "IMAGE";
  tokenCount: number;
}

/** `usageMetadata`: `promptTokenCount` includes cached tokens; thoughts are counted apart from
 * `candidatesTokenCount`; `totalTokenCount` is their sum. */
export interface UsageMetadata {
  promptTokenCount: number;
  candidatesTokenCount?: number;
  totalTokenCount: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  promptTokensDetails?: ModalityTokenCount[];
}

/** A `GenerateContentResponse`: a whole answer, or one chunk of a stream. */
export interface GenerateContentResponse {
  candidates: GeminiCandidate[];
  usageMetadata?: UsageMetadata;
  modelVersion: string;
  responseId: string;
}

/** `countTokens`' answer. */
export interface CountTokensResponse {
  totalTokens: number;
  promptTokensDetails?: ModalityTokenCount[];
}

/** A model as `GET /v1beta/models` lists it. */
export interface GeminiModel {
  /** `models/{id}`. */
  name: string;
  baseModelId: string;
  version: string;
  displayName: string;
  description?: string;
  inputTokenLimit?: number;
  outputTokenLimit?: number;
  supportedGenerationMethods: string[];
  thinking?: boolean;
}

/** `GET /v1beta/models`. */
export interface GeminiModelList {
  models: GeminiModel[];
  nextPageToken?: string;
}
