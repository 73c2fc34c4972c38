/**
 * The simulator's embeddings: a hashed bag of words. Each word (lower-cased run of letters and
 * digits; a token id counts as the word `#id`) adds ±1 at two places of the vector chosen by
 * hashing it, and the vector is L2-normalised. So the same text always has the same vector, and
 * texts that share words have a higher cosine similarity than texts that share none, which lets
 * demos and tests of retrieval and semantic caching mean something.
 */
import { SIMULATOR_EMBEDDING_DIMENSIONS } from "../../config/types.ts";
import type { EmbeddingRequest, EmbeddingResult } from "../../types/openai.ts";
import { vectorToBase64 } from "../embedding_encoding.ts";
import type { CallContext } from "../types.ts";
import { stopIfAborted } from "./abort.ts";
import { fnv1a } from "./hash.ts";
import { countTokens } from "../../canonical/tokens.ts";

const WORD = /[\p{L}\p{N}_]+/gu;
/** The seeds of the two places a word adds to. */
const SEEDS = [0x811c9dc5, 0x9e3779b9] as const;

/** The words of one input. */
function words(input: string | number[]): string[] {
  if (typeof input !== "string") return input.map((id) => `#${id}`);
  const found = input.toLowerCase().match(WORD);
  // A text of only punctuation is one word, itself.
  return found ?? [input];
}

/** The normalised hashed bag of words of `input`, `dimensions` long. */
export function embedText(input: string | number[], dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of words(input)) {
    for (const seed of SEEDS) {
      const h = fnv1a(word, seed);
      vector[h % dimensions]! += (h & 0x8000_0000) === 0 ? 1 : -1;
    }
  }
  let norm = 0;
  for (const v of vector) norm += v * v;
  // Two places of one word can cancel out (same place, opposite signs): then the first is used.
  if (norm === 0) {
    vector[0] = 1;
    return vector;
  }
  const scale = 1 / Math.sqrt(norm);
  // Rounded to float32, as OpenAI's floats are: the base64 form decodes to the same numbers.
  return vector.map((v) => Math.fround(v * scale));
}

/** Embeds every input at the requested length (default: the model's), in the encoding asked
 * for; usage counts the simulator's tokens of the texts and the token ids as given. */
export function simulateEmbeddings(
  req: EmbeddingRequest,
  ctx: CallContext,
): Promise<EmbeddingResult> {
  stopIfAborted(ctx.signal);
  const dimensions = req.dimensions ?? ctx.model.embeddings?.dimensions ??
    SIMULATOR_EMBEDDING_DIMENSIONS;
  let promptTokens = 0;
  const embeddings = (req.input as (string | number[])[]).map((input) => {
    promptTokens += typeof input === "string" ? countTokens(input) : input.length;
    const vector = embedText(input, dimensions);
    return req.encoding_format === "base64" ? vectorToBase64(vector) : vector;
  });
  return Promise.resolve({ embeddings, promptTokens });
}
