/**
 * `generationConfig` of a Gemini request as canonical options: `maxOutputTokens`,
 * `temperature` (0 to 2), `topP`, `topK`, `stopSequences` (at most 5), `seed`, the penalties,
 * `candidateCount` (1 only: the gateway answers one candidate), the output format
 * (`responseMimeType` `application/json`, with `responseJsonSchema` as written or
 * `responseSchema`, Gemini's `Schema`, as JSON Schema) and `thinkingConfig`
 * (`thinkingBudget` 0 turns thinking off, a positive one is a budget, -1 the model's own
 * choice; `thinkingLevel` an effort; `includeThoughts` whether thought summaries are shown).
 * Fields it does not read (`responseModalities`, `speechConfig`, `mediaResolution`...) are
 * returned for a Gemini back end.
 */
import type { Options, OutputFormat, ReasoningOptions } from "../../canonical/conversation.ts";
import { type Fields, OPTIONAL } from "../../validation/reader.ts";
import { fromGeminiSchema } from "./schema.ts";

const RULES = {
  maxTokens: { optional: true, min: 1 },
  temperature: { optional: true, min: 0, max: 2 },
  unit: { optional: true, min: 0, max: 1 },
  topK: { optional: true, min: 1 },
  penalty: { optional: true, min: -2, max: 2 },
  stop: { optional: true, maxItems: 5 },
  candidates: { optional: true, min: 1, max: 1 },
  budget: { optional: true, min: -1 },
} as const;
const MIME_TYPES = ["text/plain", "application/json"] as const;
const LEVELS = ["THINKING_LEVEL_UNSPECIFIED", "MINIMAL", "LOW", "MEDIUM", "HIGH"] as const;
const SCHEMA = { expected: "a JSON schema object" } as const;

/** What `generationConfig` says beyond the options. */
export interface Generation {
  /** Whether thought summaries are shown (`thinkingConfig.includeThoughts`). */
  includeThoughts: boolean;
  /** The fields the gateway does not read, as sent. */
  extras: Record<string, unknown>;
}

/** Reads `generationConfig` into `options`. */
export function parseGeneration(body: Fields, options: Options): Generation {
  const g = body.object("generationConfig", OPTIONAL);
  if (g === undefined) return { includeThoughts: false, extras: {} };
  const maxTokens = g.integer("maxOutputTokens", RULES.maxTokens);
  if (maxTokens !== undefined) {
    options.maxTokens = maxTokens;
    options.maxTokensGiven = true;
  }
  set(options, "temperature", g.number("temperature", RULES.temperature));
  set(options, "topP", g.number("topP", RULES.unit));
  set(options, "topK", g.integer("topK", RULES.topK));
  set(options, "seed", g.integer("seed", OPTIONAL));
  set(options, "presencePenalty", g.number("presencePenalty", RULES.penalty));
  set(options, "frequencyPenalty", g.number("frequencyPenalty", RULES.penalty));
  options.stop = (g.array("stopSequences", RULES.stop) ?? []).map((s) => s.string());
  g.integer("candidateCount", RULES.candidates);
  options.output = parseOutput(g);
  const thinking = g.object("thinkingConfig", OPTIONAL);
  const includeThoughts = thinking?.boolean("includeThoughts", OPTIONAL) ?? false;
  const reasoning = thinking === undefined ? undefined : parseThinking(thinking);
  if (reasoning !== undefined) options.reasoning = reasoning;
  return { includeThoughts, extras: g.extras() };
}

function set<K extends keyof Options>(options: Options, key: K, value: Options[K] | undefined) {
  if (value !== undefined) options[key] = value;
}

/** `responseMimeType` with its schema. */
function parseOutput(g: Fields): OutputFormat {
  const mime = g.oneOf("responseMimeType", MIME_TYPES, OPTIONAL);
  const json = g.optional("responseJsonSchema")?.nullAsValue().object(SCHEMA) ??
    g.optional("_responseJsonSchema")?.nullAsValue().object(SCHEMA);
  const openApi = g.optional("responseSchema")?.nullAsValue().object(SCHEMA);
  const schema = json?.value ?? (openApi ? fromGeminiSchema(openApi.value) : undefined);
  if (schema !== undefined && mime !== "application/json") {
    throw g.get("responseMimeType").invalid("expected application/json with a response schema");
  }
  if (mime !== "application/json") return { type: "text" };
  if (schema === undefined) return { type: "json" };
  return { type: "json_schema", name: "response", schema, strict: false };
}

/** `thinkingConfig` as reasoning options (`undefined`: the model's own choice). */
function parseThinking(t: Fields): ReasoningOptions | undefined {
  const budget = t.integer("thinkingBudget", RULES.budget);
  const level = t.oneOf("thinkingLevel", LEVELS, OPTIONAL);
  if (budget === 0) return { disabled: true };
  if (budget !== undefined && budget > 0) return { budgetTokens: budget };
  switch (level) {
    case "MINIMAL":
      return { effort: "minimal" };
    case "LOW":
      return { effort: "low" };
    case "MEDIUM":
      return { effort: "medium" };
    case "HIGH":
      return { effort: "high" };
    default:
      return undefined;
  }
}
