/**
 * The fake OpenAI upstream's `POST /v1/moderations`: the request checked against OpenAI's
 * documented format (only `model` and `input`; input a string, strings, or text/image_url
 * parts; omni models take at most one image, text models none), answered as OpenAI answers.
 *
 * Models: `omni-moderation-latest` / `omni-moderation-2024-09-26` answer with OpenAI's 13
 * categories (the spec's 11 plus `illicit` and `illicit/violent`) and
 * `category_applied_input_types`; `text-moderation-latest` with the 11; `text-moderation-stable`
 * in the original seven-category format (no harassment, no self-harm subcategories), so a
 * gateway must fill the missing ones. Any other model is OpenAI's 404 `model_not_found`.
 *
 * The "classifier" is a small keyword table over the text and, for images, over the text
 * embedded in the image file (PNG text chunks, JPEG and GIF comments). Images only count for
 * the categories OpenAI classifies images in.
 */
import { embeddedText } from "../../src/images/metadata.ts";
import { checkOpenAIHeaders, imageDataUrlBytes, isObj } from "./fake_openai.ts";
import type { Answer, FakeRoute } from "./fake_upstream.ts";

type Obj = Record<string, unknown>;

/** OpenAI's 13 omni categories, in the order of its documentation's example. */
export const OMNI_CATEGORIES = [
  "sexual",
  "sexual/minors",
  "harassment",
  "harassment/threatening",
  "hate",
  "hate/threatening",
  "illicit",
  "illicit/violent",
  "self-harm",
  "self-harm/intent",
  "self-harm/instructions",
  "violence",
  "violence/graphic",
] as const;

/** The original text moderation categories. */
export const LEGACY_CATEGORIES = [
  "hate",
  "hate/threatening",
  "self-harm",
  "sexual",
  "sexual/minors",
  "violence",
  "violence/graphic",
] as const;

/** The categories OpenAI also classifies images in. */
const IMAGE_CATEGORIES = new Set([
  "sexual",
  "self-harm",
  "self-harm/intent",
  "self-harm/instructions",
  "violence",
  "violence/graphic",
]);

interface ModerationModel {
  /** The snapshot the answer names. */
  answers: string;
  categories: readonly string[];
  images: boolean;
}

const MODELS: Record<string, ModerationModel> = {
  "omni-moderation-latest": {
    answers: "omni-moderation-2024-09-26",
    categories: OMNI_CATEGORIES,
    images: true,
  },
  "omni-moderation-2024-09-26": {
    answers: "omni-moderation-2024-09-26",
    categories: OMNI_CATEGORIES,
    images: true,
  },
  "text-moderation-latest": {
    answers: "text-moderation-007",
    categories: OMNI_CATEGORIES.filter((c) => !c.startsWith("illicit")),
    images: false,
  },
  "text-moderation-stable": {
    answers: "text-moderation-stable",
    categories: LEGACY_CATEGORIES,
    images: false,
  },
};

/** What the fake's classifier reacts to (in text and in text embedded in images). */
export const FAKE_LEXICON: [RegExp, Record<string, number>][] = [
  [/\bkill\b/i, { violence: 0.93, harassment: 0.71, "harassment/threatening": 0.84 }],
  [/\bidiot\b/i, { harassment: 0.88 }],
  [/\bshoplift/i, { illicit: 0.96 }],
  [/\brifle\b/i, { "illicit/violent": 0.91, violence: 0.12 }],
  [/\bhurt myself\b/i, { "self-harm": 0.91, "self-harm/intent": 0.87 }],
  [/\bblood\b/i, { violence: 0.64, "violence/graphic": 0.78 }],
];

/** The score of a category nothing matched (OpenAI's are small, never exactly 0). */
export const BASE_SCORE = 0.000012;

function score(text: string): Map<string, number> {
  const scores = new Map<string, number>();
  for (const [pattern, weights] of FAKE_LEXICON) {
    if (!pattern.test(text)) continue;
    for (const [c, w] of Object.entries(weights)) scores.set(c, Math.max(scores.get(c) ?? 0, w));
  }
  return scores;
}

/** One moderation input as the model sees it. */
interface Item {
  texts: string[];
  images: Uint8Array[];
}

/** Checks a moderation request; returns what is wrong with it. */
export function checkModerationRequest(headers: Headers, body: unknown, apiKey: string): string[] {
  const bad = checkOpenAIHeaders(headers, apiKey);
  if (!isObj(body)) return [...bad, "body is not a JSON object"];
  for (const key of Object.keys(body)) {
    if (key !== "model" && key !== "input") {
      bad.push(`Unrecognized request argument supplied: ${key}`);
    }
  }
  if (body.model !== undefined && typeof body.model !== "string") bad.push("model: a string");
  const model = MODELS[(body.model as string | undefined) ?? "omni-moderation-latest"];
  const input = body.input;
  if (typeof input === "string") return bad;
  if (!Array.isArray(input) || input.length === 0) {
    return [...bad, "input: a string, an array of strings, or an array of parts"];
  }
  if (input.every((i) => typeof i === "string")) return bad;
  let images = 0;
  input.forEach((part, i) => {
    const at = `input[${i}]`;
    if (!isObj(part)) return void bad.push(`${at}: strings and parts cannot be mixed`);
    for (const key of Object.keys(part)) {
      if (key !== "type" && key !== part.type) bad.push(`${at}.${key}: unknown`);
    }
    if (part.type === "text") {
      if (typeof part.text !== "string") bad.push(`${at}.text: a string`);
    } else if (part.type === "image_url") {
      images++;
      const url = isObj(part.image_url) ? part.image_url.url : undefined;
      if (typeof url !== "string") bad.push(`${at}.image_url.url: a string`);
      else if (!/^https?:\/\//.test(url) && imageDataUrlBytes(url) === null) {
        bad.push(`${at}.image_url.url: not an image URL or an image data URL`);
      }
    } else bad.push(`${at}.type: "text" or "image_url"`);
  });
  if (model && !model.images) {
    bad.push(`${body.model} does not support image or multi-modal inputs`);
  } else if (images > 1) bad.push(`Number of images (${images}) exceeds maximum of 1`);
  return bad;
}

function items(input: unknown): Item[] {
  if (typeof input === "string") return [{ texts: [input], images: [] }];
  const array = input as unknown[];
  if (array.every((i) => typeof i === "string")) {
    return (array as string[]).map((text) => ({ texts: [text], images: [] }));
  }
  const item: Item = { texts: [], images: [] };
  for (const part of array as Obj[]) {
    if (part.type === "text") item.texts.push(part.text as string);
    else item.images.push(imageDataUrlBytes((part.image_url as Obj).url as string)!.bytes);
  }
  return [item];
}

function result(item: Item, model: ModerationModel): Obj {
  const fromText = score(item.texts.join("\n"));
  const seen: string[] = [];
  for (const image of item.images) seen.push(...embeddedText(image));
  const fromImages = score(seen.join("\n"));
  const categories: Obj = {};
  const scores: Obj = {};
  const applied: Obj = {};
  for (const c of model.categories) {
    const forImages = IMAGE_CATEGORIES.has(c);
    const s = Math.max(fromText.get(c) ?? BASE_SCORE, forImages ? fromImages.get(c) ?? 0 : 0);
    categories[c] = s >= 0.5;
    scores[c] = s;
    applied[c] = [
      ...(item.texts.length > 0 ? ["text"] : []),
      ...(item.images.length > 0 && forImages ? ["image"] : []),
    ];
  }
  const r: Obj = {
    flagged: Object.values(categories).some((v) => v),
    categories,
    category_scores: scores,
  };
  if (model.images) r.category_applied_input_types = applied;
  return r;
}

/** OpenAI's 404 for a model it does not have, as its endpoints answer it. */
export function modelNotFound(
  name: string,
  errorBody: (status: number, type: string, message: string, code?: string) => unknown,
): Answer {
  return {
    kind: "json",
    status: 404,
    body: errorBody(
      404,
      "invalid_request_error",
      `The model \`${name}\` does not exist or you do not have access to it.`,
      "model_not_found",
    ),
  };
}

/** The `/v1/moderations` route of the fake OpenAI upstream. */
export function moderationRoute(
  apiKey: string,
  errorBody: (status: number, type: string, message: string, code?: string) => unknown,
): FakeRoute {
  let count = 0;
  return {
    check: (headers, body) => checkModerationRequest(headers, body, apiKey),
    answer(body): Answer {
      const name = (body.model as string | undefined) ?? "omni-moderation-latest";
      const model = MODELS[name];
      if (!model) return modelNotFound(name, errorBody);
      const results = [];
      for (const item of items(body.input)) results.push(result(item, model));
      const id = `modr-${(++count).toString(16).padStart(32, "0")}`;
      return { kind: "json", status: 200, body: { id, model: model.answers, results } };
    },
  };
}
