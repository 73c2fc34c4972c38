/**
 * A model's `guardrails` (docs/guardrails.md): each entry's type, stage, action and what its
 * type needs (a deny list, a webhook URL...), checked together so that a guardrail that could
 * never work (a `moderation` guardrail that redacts, a deny list with no words) stops start-up.
 */
import { quote } from "../quote.ts";
import { unsafePattern } from "../guardrails/safe_pattern.ts";
import { OPTIONAL, type Reader } from "../validation/reader.ts";
import { doneWithSuggestion } from "./suggest.ts";
import {
  GUARDRAIL_ACTIONS,
  GUARDRAIL_ON_ERROR,
  GUARDRAIL_STAGES,
  GUARDRAIL_TYPES,
  type GuardrailConfig,
  MODERATION_CATEGORIES,
  type ModerationCategory,
  PII_KINDS,
} from "./types.ts";

/** Guardrails of one model at most. */
const MAX_GUARDRAILS = 16;
/** A guardrail's name: what errors, logs and metric labels show. */
const NAME = {
  optional: true,
  pattern: /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/,
  format: "1 to 64 letters, digits, _ . or - (starting with a letter or digit)",
} as const;
/** A deny word or phrase. */
const WORD = { nonEmpty: true, maxLength: 64 } as const;
const WORDS = { optional: true, maxItems: 256 } as const;
const PATTERNS = { optional: true, maxItems: 32 } as const;
const TIMEOUT = { optional: true, min: 1, max: 60_000 } as const;
const ENV_NAME = {
  optional: true,
  pattern: /^[A-Za-z_][A-Za-z0-9_]{0,127}$/,
  format: "an environment variable name",
} as const;

/** The fields a guardrail entry may have. */
const FIELDS = [
  "type",
  "name",
  "stage",
  "action",
  "on_error",
  "entities",
  "restore",
  "model",
  "categories",
  "words",
  "patterns",
  "url",
  "timeout_ms",
  "token_env",
] as const;

/** The fields only some types take, and which. */
const ONLY: Readonly<Record<string, readonly string[]>> = {
  entities: ["pii"],
  restore: ["pii"],
  model: ["moderation"],
  categories: ["moderation"],
  words: ["deny"],
  patterns: ["deny"],
  url: ["webhook"],
  timeout_ms: ["webhook"],
  token_env: ["webhook"],
};

/** A model's `guardrails`, or `undefined` when absent, `null` or empty. */
export function readGuardrails(r: Reader): GuardrailConfig[] | undefined {
  const items = r.array({ optional: true, nullable: true, maxItems: MAX_GUARDRAILS });
  if (!items || items.length === 0) return undefined;
  const guardrails = items.map(readGuardrail);
  const names = new Map<string, number>();
  const types = new Map<string, number>();
  for (const g of guardrails) types.set(g.type, (types.get(g.type) ?? 0) + 1);
  guardrails.forEach((g, i) => {
    if (!items[i]!.object().has("name") && types.get(g.type)! > 1) g.name = `${g.type}_${i + 1}`;
    const first = names.get(g.name);
    if (first !== undefined) {
      throw items[i]!.child("name", g.name).invalid(
        `duplicate guardrail name ${quote(g.name)} (also guardrails[${first}])`,
      );
    }
    names.set(g.name, i);
  });
  return guardrails;
}

/** One guardrail entry. */
function readGuardrail(r: Reader): GuardrailConfig {
  const f = r.object();
  const type = f.oneOf("type", GUARDRAIL_TYPES);
  const g: GuardrailConfig = {
    type,
    name: f.string("name", NAME) ?? type,
    stage: f.oneOf("stage", GUARDRAIL_STAGES),
    action: f.oneOf("action", GUARDRAIL_ACTIONS),
    on_error: f.oneOf("on_error", GUARDRAIL_ON_ERROR, OPTIONAL) ?? "block",
  };
  for (const [field, types] of Object.entries(ONLY)) {
    if (f.has(field) && !types.includes(type)) {
      throw f.get(field).invalid(`only a ${types.join(" or ")} guardrail takes ${field}`);
    }
  }
  if (type === "moderation" && g.action === "redact") {
    throw f.get("action").invalid('a moderation guardrail can "block" or "log", not "redact"');
  }
  if (type === "pii") {
    const entities = f.array("entities", { optional: true, minItems: 1, maxItems: 16 });
    if (entities) g.entities = [...new Set(entities.map((e) => e.oneOf(PII_KINDS)))];
    const restore = f.boolean("restore", OPTIONAL);
    if (restore) {
      if (g.stage !== "input" || g.action !== "redact") {
        throw f.get("restore").invalid('only an input guardrail with action "redact" restores');
      }
      g.restore = true;
    }
  }
  if (type === "moderation") {
    const model = f.string("model", { optional: true, nonEmpty: true, maxLength: 128 });
    if (model !== undefined) g.model = model;
    const categories = f.object("categories", OPTIONAL);
    if (categories) {
      const thresholds: Partial<Record<ModerationCategory, number>> = {};
      for (const category of MODERATION_CATEGORIES) {
        const t = categories.number(category, { optional: true, min: 0, max: 1 });
        if (t !== undefined) thresholds[category] = t;
      }
      doneWithSuggestion(categories, MODERATION_CATEGORIES);
      g.categories = thresholds;
    }
  }
  if (type === "deny") {
    const words = f.array("words", WORDS)?.map((w) => w.string(WORD));
    const patterns = f.array("patterns", PATTERNS)?.map((p) => {
      const pattern = p.string({ nonEmpty: true, maxLength: 1000 });
      const unsafe = unsafePattern(pattern);
      if (unsafe !== null) throw p.invalid(`${quote(pattern)} is refused: ${unsafe}`);
      return pattern;
    });
    if (!words?.length && !patterns?.length) {
      throw r.invalid("a deny guardrail needs words or patterns");
    }
    if (words?.length) g.words = words;
    if (patterns?.length) g.patterns = patterns;
  }
  if (type === "webhook") {
    const url = f.string("url", { nonEmpty: true, maxLength: 2048 });
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      throw f.get("url").invalid(`expected an http or https URL, but got ${quote(url)}`);
    }
    g.url = url;
    g.timeout_ms = f.integer("timeout_ms", TIMEOUT) ?? 2000;
    const tokenEnv = f.string("token_env", ENV_NAME);
    if (tokenEnv !== undefined) g.token_env = tokenEnv;
  }
  doneWithSuggestion(f, FIELDS);
  return g;
}
