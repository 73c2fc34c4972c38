/**
 * Gemini `generateContent` bodies (and `countTokens` ones) into canonical requests, every
 * field checked by the validation readers so that a mistake is a 400 naming its path
 * (answered in Google's shape). The model and whether to stream are the path's. Fields the
 * canonical model does not carry (`safetySettings`, `cachedContent`, `labels`, unread
 * `generationConfig` fields) are kept as extras of protocol `gemini_generate`.
 */
import type { CanonicalRequest, Options } from "../../canonical/conversation.ts";
import { defaultOptions } from "../../canonical/conversation.ts";
import { noUses, type Uses } from "../../canonical/uses.ts";
import { DEFAULT_IMAGE_CAPS } from "../../config/limits.ts";
import type { ImageCaps } from "../../http/image_data_url.ts";
import { type Fields, OPTIONAL, readRequest } from "../../validation/reader.ts";
import { decodeImages, type PendingImages } from "../shared/images.ts";
import { parseContents, parseSystemInstruction } from "./contents.ts";
import { parseGeneration } from "./generation.ts";
import { parseToolConfig, parseTools } from "./tools.ts";

/** A parsed Gemini request and what it uses. */
export interface ParsedGemini {
  req: CanonicalRequest;
  uses: Uses;
  /** Whether thought summaries are shown (`generationConfig.thinkingConfig.includeThoughts`). */
  includeThoughts: boolean;
}

/** How the path calls the model. */
export interface GeminiCall {
  /** The model id of the path. */
  model: string;
  stream: boolean;
}

/** Checks a `generateContent` body (its images within `caps`) for `call`. */
export function parseGeminiRequest(
  body: Record<string, unknown>,
  call: GeminiCall,
  caps: Readonly<ImageCaps> = DEFAULT_IMAGE_CAPS,
): ParsedGemini {
  return parseFields(readRequest(body), call, caps);
}

/** Checks a `countTokens` body: `contents`, or a whole `generateContentRequest`. */
export function parseCountTokensRequest(
  body: Record<string, unknown>,
  model: string,
  caps: Readonly<ImageCaps> = DEFAULT_IMAGE_CAPS,
): ParsedGemini {
  const f = readRequest(body);
  const whole = f.object("generateContentRequest", OPTIONAL);
  if (whole !== undefined) {
    whole.string("model", OPTIONAL);
    return parseFields(whole, { model, stream: false }, caps, true);
  }
  return parseFields(f, { model, stream: false }, caps, true);
}

function parseFields(
  f: Fields,
  call: GeminiCall,
  caps: Readonly<ImageCaps>,
  counting = false,
): ParsedGemini {
  const uses = noUses();
  const pending: PendingImages = { fields: [], parts: [] };
  const messages = [
    ...parseSystemInstruction(f),
    ...parseContents(f.get("contents"), { pending, uses, counting }),
  ];
  decodeImages(pending, caps);
  const tools = parseTools(f, uses);
  const options: Options = { ...defaultOptions(), tools, toolChoice: parseToolConfig(f, tools) };
  const generation = parseGeneration(f, options);
  const extras = f.extras();
  if (Object.keys(generation.extras).length > 0) extras.generationConfig = generation.extras;
  return {
    req: {
      model: call.model,
      messages,
      options,
      stream: call.stream,
      includeUsage: call.stream,
      extras: { protocol: "gemini_generate", fields: extras },
    },
    uses,
    includeThoughts: generation.includeThoughts,
  };
}
