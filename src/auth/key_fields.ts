import { unmatchedPatterns, unmatchedWarnings } from "../catalogue/model.ts";
import { readGuardrails } from "../config/guardrails.ts";
import { LIMIT_SCOPES, type WindowLimit } from "../config/types.ts";
import { type Fields, readJson } from "../validation/reader.ts";
import type { KeyFields } from "./keys.ts";
import type { Budget } from "../limits/budget.ts";
import type { KeyRecord } from "./principal.ts";

const NAME = { nonEmpty: true, maxLength: 200 } as const;
/** Ids or globs of a key's allow-list at most (its record must fit a KV value); `null` for
 * every model. */
const MODELS = {
  nullable: true,
  maxItems: 256,
  expected: "an array of model ids or globs",
} as const;
/** An id or glob of a key's allow-list: as long as a model id may be (`MODEL_ID` of
 * config/models.ts). */
const MODEL = {
  maxLength: 128,
  pattern: /^[A-Za-z0-9*][A-Za-z0-9._:\/*-]*$/,
  format:
    "a model id or a glob with * of letters, digits and . _ : / - * (at most 128, starting with a letter, digit or *)",
} as const;
/** A window's limit, or `null` for none. */
const LIMIT = { nullable: true, min: 1 } as const;
const WINDOWS = ["per_minute", "per_day"] as const;
/** Requests of a key at once, or `null` for any number. */
const CONCURRENT = { nullable: true, min: 1, max: 10_000 } as const;
/** A budget in currency units, or `null` for none. */
const MONEY = { nullable: true, min: 0, max: 1e12 } as const;
const CHAT_WINDOWS = [...WINDOWS, "tokens_per_minute", "tokens_per_day"] as const;

/**
 * Validates the fields of a key to create (`name` required) or to change (every field
 * optional, at least one given; `disabled` too). Throws a `ValidationError` naming the field.
 */
export function readKeyFields(value: unknown, mode: "create"): KeyFields & { name: string };
export function readKeyFields(value: unknown, mode: "update"): KeyFields;
export function readKeyFields(value: unknown, mode: "create" | "update"): KeyFields {
  const f = readJson(value).object();
  const fields: KeyFields = {};
  if (mode === "create" || f.has("name")) fields.name = f.string("name", NAME);
  if (f.has("models")) {
    fields.models = f.array("models", MODELS)?.map((item) => item.string(MODEL)) ?? null;
  }
  if (f.has("preview")) fields.preview = f.boolean("preview");
  if (f.has("limits")) fields.limits = readLimitOverrides(f.object("limits"));
  if (f.has("max_concurrent")) fields.max_concurrent = f.integer("max_concurrent", CONCURRENT);
  if (f.has("budget")) fields.budget = readBudget(f.object("budget", { nullable: true }));
  if (f.has("guardrails")) fields.guardrails = readGuardrails(f.get("guardrails")) ?? null;
  if (f.has("cache")) fields.cache = f.boolean("cache", { nullable: true });
  if (mode === "update" && f.has("disabled")) fields.disabled = f.boolean("disabled");
  f.done();
  if (mode === "update" && Object.keys(fields).length === 0) {
    throw f.reader.invalid(
      "nothing to change: give one or more of name, models, preview, limits, max_concurrent, budget, guardrails, cache, disabled",
    );
  }
  return fields;
}

/** A key's budget per day and month in currency units (`null`: none), or `null` for none. */
function readBudget(f: Fields | null): Budget | null {
  if (f === null) return null;
  const budget: Budget = {};
  for (const name of ["per_day", "per_month"] as const) {
    if (f.has(name)) budget[name] = f.number(name, MONEY);
  }
  f.done();
  return budget;
}

/** A key's own limits by scope; a window left out keeps the default, `null` is no limit. */
function readLimitOverrides(f: Fields): KeyRecord["limits"] {
  const out: KeyRecord["limits"] = {};
  for (const scope of LIMIT_SCOPES) {
    if (!f.has(scope)) continue;
    const w = f.object(scope);
    const window: Partial<WindowLimit> = {};
    for (const name of scope === "chat" ? CHAT_WINDOWS : WINDOWS) {
      if (w.has(name)) window[name] = w.integer(name, LIMIT);
    }
    w.done();
    out[scope] = window;
  }
  f.done();
  return out;
}

/** The warning for an empty allow-list, which lets the key use no model at all. */
const EMPTY_ALLOW_LIST = "models: [] allows no model, so the key can use none";

/**
 * Warning lines for a key's allow-list `models` that lets it use nothing the catalogue (`ids`)
 * has: the empty list, or each pattern that matches no model (a typo like `sim-chatt`). None for
 * `null`, which allows every model.
 */
export function allowListWarnings(
  models: readonly string[] | null,
  ids: readonly string[],
): string[] {
  if (models !== null && models.length === 0) return [EMPTY_ALLOW_LIST];
  return unmatchedWarnings(unmatchedPatterns(models, ids));
}

/** A key as the admin API and the CLI show it: everything but the hash, times in ISO 8601. */
export function keyView(record: KeyRecord) {
  return {
    id: record.id,
    name: record.name,
    created: new Date(record.created).toISOString(),
    last_used: record.last_used === null ? null : new Date(record.last_used).toISOString(),
    disabled: record.disabled,
    models: record.models,
    preview: record.preview,
    limits: record.limits,
    max_concurrent: record.max_concurrent ?? null,
    budget: record.budget ?? null,
    // Only when set: a key's view is as it was before keys had guardrails.
    ...(record.guardrails ? { guardrails: record.guardrails } : {}),
    cache: record.cache ?? null,
  };
}
