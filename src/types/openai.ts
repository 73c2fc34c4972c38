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
