/**
 * Moderation through an OpenAI-style `POST {base_url}/moderations`. Texts without images go in
 * one batched call (`input` an array of strings, one result each). A text with images is sent
 * as OpenAI's multi-modal input, one call per image (omni models take at most one image per
 * request, and a multi-modal array is one input with one result), and the image calls of one
 * text are merged: the highest score and any flag per category. Every answer is reduced to the
 * spec's 11 categories (OpenAI's `illicit` and `illicit/violent` dropped, missing ones 0/false).
 */
import { mapBounded } from "../../moderation/map_bounded.ts";
import { pairInputs } from "../../moderation/pairing.ts";
import {
  type CategoryFlags,
  type CategoryScores,
  finalizeResult,
  normalizeCategories,
} from "../../moderation/result.ts";
import { MODERATION_CATEGORIES } from "../../config/types.ts";
import { upstreamError } from "../../errors.ts";
import type { ModerationRequest, ModerationResult } from "../../types/openai.ts";
import type { CallContext } from "../types.ts";
import { chatPost } from "../upstream/request.ts";
import type { Upstream } from "../upstream/upstream.ts";
import { isObject, malformed } from "../wire.ts";

/** One part of OpenAI's multi-modal moderation input. */
export type OpenAIModerationPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } };

/** The body of `POST /moderations`. */
export interface OpenAIModerationBody {
  model: string;
  input: string[] | OpenAIModerationPart[];
}

/** One upstream call and, for each result it must give, the index of the text it belongs to. */
export interface ModerationCall {
  body: OpenAIModerationBody;
  texts: number[];
}

/** One upstream result reduced to the 11 categories. */
export interface UpstreamVerdict {
  categories: CategoryFlags;
  category_scores: CategoryScores;
}

/** How many upstream calls of one request run at once. */
const CONCURRENCY = 4;

/** The upstream calls for a request (see the module comment), texts paired with images. */
export function moderationCalls(req: ModerationRequest, upstreamModel: string): ModerationCall[] {
  const pairs = pairInputs(req.input, req.input_images);
  const calls: ModerationCall[] = [];
  const plain = pairs.flatMap((p, i) => (p.images.length === 0 ? [i] : []));
  if (plain.length > 0) {
    calls.push({
      body: { model: upstreamModel, input: plain.map((i) => pairs[i]!.text) },
      texts: plain,
    });
  }
  pairs.forEach((pair, i) => {
    for (const url of pair.images) {
      const input: OpenAIModerationPart[] = pair.text === ""
        ? []
        : [{ type: "text", text: pair.text }];
      input.push({ type: "image_url", image_url: { url } });
      calls.push({ body: { model: upstreamModel, input }, texts: [i] });
    }
  });
  return calls;
}

/**
 * Reads a moderation answer that must hold `expected` results. A body without a `results`
 * array of that length, or a result without a `category_scores` object, is a 502.
 */
export function readModerationAnswer(data: unknown, expected: number): UpstreamVerdict[] {
  const results = isObject(data) ? data.results : undefined;
  if (!Array.isArray(results)) throw malformed("moderation answer (no results array)");
  if (results.length !== expected) {
    throw upstreamError(
      `The upstream moderation model returned ${results.length} results for ${expected} inputs.`,
    );
  }
  return results.map((result, i) => {
    if (!isObject(result) || !isObject(result.category_scores)) {
      throw malformed(`moderation answer (results[${i}] has no category_scores object)`);
    }
    if (result.categories !== undefined && !isObject(result.categories)) {
      throw malformed(`moderation answer (results[${i}].categories is not an object)`);
    }
    return normalizeCategories(result);
  });
}

/** Two verdicts on one text as one: per category the higher score, and a flag if either has it. */
export function mergeVerdicts(a: UpstreamVerdict, b: UpstreamVerdict): UpstreamVerdict {
  const merged = normalizeCategories(a);
  for (const c of MODERATION_CATEGORIES) {
    merged.categories[c] ||= b.categories[c];
    merged.category_scores[c] = Math.max(merged.category_scores[c], b.category_scores[c]);
  }
  return merged;
}

/** Moderates a request through an OpenAI-style upstream; one result per text, in order. */
export async function openAIModerate(
  upstream: Upstream,
  req: ModerationRequest,
  ctx: CallContext,
): Promise<ModerationResult[]> {
  const calls = moderationCalls(req, ctx.upstreamModel);
  const answers = await mapBounded(calls, CONCURRENCY, ctx.signal, async (call, _i, signal) => {
    const data = await upstream.json(
      chatPost({ ...ctx, signal }, "/moderations", call.body, false),
    );
    return readModerationAnswer(data, call.texts.length);
  });
  const verdicts: (UpstreamVerdict | undefined)[] = new Array(req.input.length);
  calls.forEach((call, c) => {
    call.texts.forEach((text, r) => {
      const verdict = answers[c]![r]!;
      const seen = verdicts[text];
      verdicts[text] = seen ? mergeVerdicts(seen, verdict) : verdict;
    });
  });
  return verdicts.map((verdict) => finalizeResult(verdict!));
}
