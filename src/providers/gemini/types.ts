/**
 * The parts of Gemini's `generateContent` wire format (v1beta) that the adapter writes and
 * reads: requests as sent, answers as documented (googleapis/js-genai `src/types.ts`).
 */

/** One piece of a content: exactly one data field, with a thought flag and signature beside. */
export interface GeminiPart {
  text?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType: string; fileUri: string };
  functionCall?: { id?: string; name: string; args: Record<string, unknown> };
  functionResponse?: {
    id?: string;
    name: string;
    response: Record<string, unknown>;
    /** Gemini 3's multimodal function responses: the tool's inline media. */
    parts?: { inlineData: { mimeType: string; data: string } }[];
  };
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

/** A function the model may call (`parametersJsonSchema` is JSON Schema). */
export interface FunctionDeclaration {
  name: string;
  description?: string;
  parametersJsonSchema?: Record<string, unknown>;
}

/** `toolConfig.functionCallingConfig`. */
export interface FunctionCallingConfig {
  mode: "AUTO" | "ANY" | "NONE";
  allowedFunctionNames?: string[];
}

/** `generationConfig.thinkingConfig`. */
export interface ThinkingConfig {
  /** 0 turns thinking off. */
  thinkingBudget?: number;
  includeThoughts?: boolean;
}

/** `generationConfig`. */
export interface GenerationConfig {
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseJsonSchema?: Record<string, unknown>;
  thinkingConfig?: ThinkingConfig;
}

/** The body of `models/{model}:generateContent` (and `:streamGenerateContent`). */
export interface GenerateContentRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: { text: string }[] };
  tools?: { functionDeclarations: FunctionDeclaration[] }[];
  toolConfig?: { functionCallingConfig: FunctionCallingConfig };
  generationConfig?: GenerationConfig;
}
