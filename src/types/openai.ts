/**
 * The OpenAI API style of models, moderation and images: Switchyard's public API (spec §2) and
 * the wire format of `openai`-style upstreams. Field names follow the wire exactly. (Chat
 * completions have their own wire types, in `api/chat_completions/wire.ts`.)
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
  /** Served on `POST /v1/embeddings`. */
  embeddings: boolean;
  /** Served on `POST /v1/rerank`. */
  rerank: boolean;
  featured: boolean;
  labels: string[];
  access: "public" | "key" | "preview";
  context_length?: number;
  default_moderation?: true;
  /** An embedding model's vector length, when its config states it. */
  embedding_dimensions?: number;
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

/** One moderation result (spec §2.7). */
export interface ModerationResult {
  flagged: boolean;
  categories: Record<string, boolean>;
  category_scores: Record<string, number>;
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

/** A validated embeddings request (`POST /v1/embeddings`): one or more texts, or one or more
 * arrays of token ids. */
export interface EmbeddingRequest {
  model: string;
  input: string[] | number[][];
  encoding_format: "float" | "base64";
  /** The vector length asked for; `null`: the model's own. */
  dimensions: number | null;
  user: string | null;
  /** What the vectors are for (Gemini's `taskType`, an extension field), or `null`. */
  task_type: string | null;
}

/** A back end's embeddings, one per input in order: floats, or (when `base64` was asked for)
 * little-endian float32 bytes in base64, as OpenAI writes them; or, passed on from an upstream
 * that answered in the client's encoding, the whole answer as the client gets it. */
export type EmbeddingResult =
  | {
    embeddings: (number[] | string)[];
    /** Input tokens, as the back end counted them. */
    promptTokens: number;
  }
  | {
    /** OpenAI's answer (`object`, `data`, `model`: the gateway's id, `usage`): its JSON bytes
     * in parts, in order. */
    answer: Uint8Array[];
    promptTokens: number;
    /** Gives the answer's buffer back to the HTTP client once it is written (or dropped). */
    release?: () => void;
  };

/** One vector of the embeddings response. */
export interface Embedding {
  object: "embedding";
  index: number;
  embedding: number[] | string;
}

/** The embeddings response, OpenAI's shape. */
export interface EmbeddingResponse {
  object: "list";
  data: Embedding[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}
