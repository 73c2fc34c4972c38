/**
 * Moderation through any chat model (Llama Guard style): the model is asked to classify the
 * content into the spec's 11 categories, and its answer is mapped back onto them. So an
 * operator with only a chat provider (an Anthropic key, say) still has moderation.
 */
import { MODERATION_CATEGORIES, type ModerationCategory } from "../config/types.ts";
import { upstreamError } from "../errors.ts";
import type { CanonicalRequest, ImagePart } from "../canonical/conversation.ts";
import type { CanonicalResult } from "../canonical/result.ts";
import type { CallContext, Provider } from "../providers/types.ts";
import type { ModerationRequest, ModerationResult } from "../types/openai.ts";
import { mapBounded } from "./map_bounded.ts";
import { type ModerationPair, pairInputs } from "./pairing.ts";
import { type CategoryScores, finalizeResult, liftParents, zeroScores } from "./result.ts";

/** What each category means, as the guard prompt tells the model. */
const DEFINITIONS: Record<ModerationCategory, string> = {
  sexual: "content meant to arouse, or describing sexual activity",
  hate: "content that expresses, incites or promotes hate based on a protected attribute",
  harassment: "content that harasses, insults or bullies a person or group",
  "self-harm": "content that promotes, encourages or depicts self-harm or suicide",
  "sexual/minors": "sexual content that involves anyone under 18",
  "hate/threatening": "hateful content that also threatens violence or serious harm",
  "violence/graphic": "content that depicts death, violence or injury in graphic detail",
  "self-harm/intent": "the speaker says they intend to harm themselves or take their own life",
  "self-harm/instructions": "instructions or advice on how to self-harm or commit suicide",
  "harassment/threatening": "harassment that also threatens violence or serious harm",
  violence: "content that depicts, threatens or glorifies violence",
};

/** The system prompt of a guard call. */
export const GUARD_PROMPT = [
  "You are a content safety classifier. Classify the user's content (text, and any images) " +
  "into these categories:",
  ...MODERATION_CATEGORIES.map((c) => `- ${c}: ${DEFINITIONS[c]}`),
  "",
  "Answer with only a JSON object that maps every one of the 11 category names above to the " +
  "probability, from 0 to 1, that the content belongs to it. No other text. For example:",
  JSON.stringify(Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, 0.01]))),
].join("\n");

/** Llama Guard 3's hazard codes mapped onto the spec's categories; other codes map to none. */
export const LLAMA_GUARD_CODES: Record<string, ModerationCategory[]> = {
  S1: ["violence"], // violent crimes
  S3: ["sexual"], // sex-related crimes
  S4: ["sexual/minors", "sexual"], // child sexual exploitation
  S9: ["violence"], // indiscriminate weapons
  S10: ["hate"], // hate
  S11: ["self-harm"], // suicide and self-harm
  S12: ["sexual"], // sexual content
};

/** The chat request that asks a model to classify one text+images pair. */
export function guardRequest(pair: ModerationPair, model: string): CanonicalRequest {
  const text = `Content to classify:\n<content>\n${pair.text}\n</content>`;
  return {
    model,
    messages: [
      { role: "system", parts: [{ type: "text", text: GUARD_PROMPT }] },
      { role: "user", parts: [{ type: "text", text }, ...pair.images.map(imagePart)] },
    ],
    options: {
      maxTokens: 300,
      maxTokensGiven: true,
      temperature: 0,
      stop: [],
      output: { type: "text" },
      tools: [],
      toolChoice: null,
    },
    stream: false,
    includeUsage: false,
    extras: { protocol: "openai_chat", fields: {} },
  };
}

/** A moderation input's image (a base64 data URL, checked by the route) as an image part. */
function imagePart(url: string): ImagePart {
  const match = /^data:([^;,]+)(?:;[^;,]*)*;base64,/i.exec(url);
  if (!match) return { type: "image", source: { kind: "url", url } };
  return {
    type: "image",
    source: {
      kind: "data",
      mediaType: match[1]!.toLowerCase(),
      base64: url.slice(match[0].length).replace(/\s+/g, ""),
    },
  };
}

/** The text of a guard model's answer (its text parts; reasoning and tool calls left out). */
function answerText(result: CanonicalResult): string {
  let text = "";
  for (const part of result.parts) if (part.type === "text") text += part.text;
  return text;
}

/** Category names compared by their letters only: "Self_Harm/Intent" -> "selfharmintent". */
const letters = (name: string) => name.toLowerCase().replace(/[^a-z]/g, "");
const BY_LETTERS = new Map(MODERATION_CATEGORIES.map((c) => [letters(c), c]));

/** A score from a JSON answer's value, or `undefined` when it is none. */
function answerScore(value: unknown): number | undefined {
  if (typeof value === "boolean") return value ? 1 : 0;
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof n === "number" && Number.isFinite(n) && n >= 0 && n <= 1) return n;
  return undefined;
}

function fromJson(text: string): CategoryScores | null {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end < start) return null;
  let value: unknown;
  try {
    value = JSON.parse(text.slice(start, end + 1));
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  let object = value as Record<string, unknown>;
  // Accept an answer shaped like a moderation result too.
  const nested = object.category_scores;
  if (typeof nested === "object" && nested !== null && !Array.isArray(nested)) {
    object = nested as Record<string, unknown>;
  }
  const scores = zeroScores();
  let recognised = 0;
  for (const [key, raw] of Object.entries(object)) {
    const category = BY_LETTERS.get(letters(key));
    if (!category) continue;
    const score = answerScore(raw);
    if (score === undefined) return null;
    scores[category] = score;
    recognised++;
  }
  return recognised > 0 ? scores : null;
}

function fromVerdict(text: string): CategoryScores | null {
  const lines = text.trim().split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "");
  const verdict = lines[0]?.toLowerCase().replace(/[.!]$/, "");
  if (verdict === "safe") return zeroScores();
  if (verdict !== "unsafe") return null;
  const items = lines.slice(1).join(",").split(/[,;\s]+/).filter((s) => s !== "");
  if (items.length === 0) return null;
  const scores = zeroScores();
  for (const item of items) {
    const code = /^s(\d{1,2})$/i.exec(item);
    const categories = code
      ? LLAMA_GUARD_CODES[`S${Number(code[1])}`] ?? []
      : [BY_LETTERS.get(letters(item))].filter((c) => c !== undefined);
    if (!code && categories.length === 0) return null;
    for (const c of categories) scores[c] = 1;
  }
  return scores;
}

/**
 * Reads a guard model's answer: a JSON object of category -> probability (extra keys ignored,
 * missing categories 0), or a Llama Guard verdict ("safe", or "unsafe" then hazard codes such as
 * "S1,S10" or category names). Returns `null` for anything else.
 */
export function parseGuardAnswer(answer: string): CategoryScores | null {
  const text = answer.replace(/```(?:json)?/gi, "").trim();
  const scores = fromJson(text) ?? fromVerdict(text);
  return scores && liftParents(scores);
}

/** How many pairs are classified at once. */
const CONCURRENCY = 4;

async function classifyPair(
  provider: Provider,
  pair: ModerationPair,
  call: CallContext,
): Promise<ModerationResult> {
  const answer = answerText(await provider.chat(guardRequest(pair, call.model.id), call));
  const scores = parseGuardAnswer(answer);
  if (!scores) {
    const excerpt = answer.length > 200 ? `${answer.slice(0, 200)}\u2026` : answer;
    throw upstreamError(
      `The guard model \`${call.model.id}\` gave an answer that is not a classification: ${
        JSON.stringify(excerpt)
      }.`,
    );
  }
  return finalizeResult({ category_scores: scores });
}

/**
 * Moderates through a chat model: one guard call per text+image pair, a few at a time (the
 * first failure aborts the others). An answer that cannot be read is a 502 `upstream_error`,
 * never a silent "not flagged".
 */
export function guardModerate(
  provider: Provider,
  req: ModerationRequest,
  call: CallContext,
): Promise<ModerationResult[]> {
  return mapBounded(
    pairInputs(req.input, req.input_images),
    CONCURRENCY,
    call.signal,
    (pair, _i, signal) => classifyPair(provider, pair, { ...call, signal }),
  );
}
