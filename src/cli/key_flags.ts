/**
 * The flags of `deno task keys create` and `update` that set a key's fields: `--name`,
 * `--models`, `--preview`/`--no-preview`, the limit flags, `--max-concurrent`, `--cache`,
 * `--guardrails` and the budget flags, read into the fields the key store takes.
 */
import { type Args, integerIn, invalidValue, UsageError } from "../args.ts";
import { readKeyFields } from "../auth/key_fields.ts";
import type { KeyFields } from "../auth/keys.ts";
import type { KeyRecord } from "../auth/principal.ts";
import { LIMIT_SCOPES, type LimitScope, type WindowLimit } from "../config/types.ts";
import { ValidationError } from "../validation/error.ts";

/** A limit flag's place: a window of a scope's limits. */
interface LimitField {
  scope: LimitScope;
  field: keyof WindowLimit;
}

/** The limit flags, each a window of a scope's limits. */
const LIMIT_FIELDS = new Map<string, LimitField>([
  ...LIMIT_SCOPES.flatMap((scope): [string, LimitField][] => [
    [`${scope}-per-minute`, { scope, field: "per_minute" }],
    [`${scope}-per-day`, { scope, field: "per_day" }],
  ]),
  ["tokens-per-minute", { scope: "chat", field: "tokens_per_minute" }],
  ["tokens-per-day", { scope: "chat", field: "tokens_per_day" }],
]);
/** The flags of a key's budget (currency units). */
const BUDGET_FLAGS = ["budget-per-day", "budget-per-month"] as const;
/** `--cache`'s values: the key's `cache` field (docs/caching.md). */
const CACHE_VALUES: Readonly<Record<string, boolean | null>> = {
  on: true,
  off: false,
  default: null,
};
/** The largest limit a flag takes (15 digits). */
const MAX_LIMIT = 999_999_999_999_999;
/** The largest concurrency cap a flag takes before the key's own check (5 digits). */
const MAX_CONCURRENT = 99_999;

/** What `--guardrails` takes (its errors say so). */
const GUARDRAILS_EXPECTED =
  'a JSON array of guardrails as in docs/guardrails.md (like \'[{"type": "pii", "stage": "input", "action": "redact"}]\') or "none"';

/** The flags that set a key's limits, concurrency cap, budget, use of the response cache and
 * guardrails; each takes a value. */
export const LIMIT_FLAGS: readonly string[] = [
  ...LIMIT_FIELDS.keys(),
  ...BUDGET_FLAGS,
  "max-concurrent",
  "cache",
  "guardrails",
];

/** The fields of a key to create from the flags of `create`; `--name` is required. Throws a
 * {@link UsageError} naming the flag or the field. */
export function fieldsToCreate(args: Args): KeyFields & { name: string } {
  if (!args.values.has("name")) throw new UsageError("create needs --name NAME");
  const raw = rawFields(args, null);
  return validate(() => readKeyFields(raw, "create"));
}

/** What the flags of `update` change in `current`; at least one must be given. Throws a
 * {@link UsageError} naming the flag or the field. */
export function fieldsToUpdate(args: Args, current: KeyRecord): KeyFields {
  const raw = rawFields(args, current);
  if (Object.keys(raw).length === 0) {
    throw new UsageError("update needs at least one option to change");
  }
  return validate(() => readKeyFields(raw, "update"));
}

/** The key fields the flags give, as the admin API's JSON would give them, over `current`
 * (null when creating). */
function rawFields(args: Args, current: KeyRecord | null): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  const name = args.values.get("name");
  if (name !== undefined) raw.name = name;
  const models = args.values.get("models");
  if (models !== undefined) raw.models = readModels(models);
  if (args.switches.has("preview") && args.switches.has("no-preview")) {
    throw new UsageError("give --preview or --no-preview, not both");
  }
  if (args.switches.has("preview")) raw.preview = true;
  if (args.switches.has("no-preview")) raw.preview = false;
  const limits = readLimits(args, current?.limits ?? {}, current !== null);
  if (limits !== undefined) raw.limits = limits;
  Object.assign(raw, readCaps(args, current));
  const cache = args.values.get("cache");
  if (cache !== undefined) {
    if (!(cache in CACHE_VALUES)) throw invalidValue("cache", '"on", "off" or "default"', cache);
    raw.cache = CACHE_VALUES[cache];
  }
  const guardrails = args.values.get("guardrails");
  if (guardrails !== undefined) raw.guardrails = readGuardrailsFlag(guardrails);
  return raw;
}

/** `--guardrails`: the key's guardrails as the admin API's JSON gives them (validated with
 * them), or "none" (`null`: removes them). */
function readGuardrailsFlag(value: string): unknown {
  if (value === "none") return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw invalidValue("guardrails", GUARDRAILS_EXPECTED, value);
  }
  if (!Array.isArray(parsed) && parsed !== null) {
    throw invalidValue("guardrails", GUARDRAILS_EXPECTED, value);
  }
  return parsed;
}

/** `--models`: ids or globs, comma-separated; "all" (or "*") for every model. */
function readModels(value: string): string[] | null {
  if (value === "all" || value === "*") return null;
  return value.split(",").map((s) => s.trim()).filter((s) => s !== "");
}

/** The limit overrides from the flags, applied over `base`; `allowDefault` lets "default"
 * remove an override. */
function readLimits(
  args: Args,
  base: KeyRecord["limits"],
  allowDefault: boolean,
): KeyRecord["limits"] | undefined {
  let changed = false;
  const limits: KeyRecord["limits"] = structuredClone(base);
  for (const [flag, { scope, field }] of LIMIT_FIELDS) {
    const raw = args.values.get(flag);
    if (raw === undefined) continue;
    changed = true;
    const own = limits[scope] ?? {};
    if (raw === "default" && allowDefault) {
      delete own[field];
    } else if (raw === "unlimited") {
      own[field] = null;
    } else {
      const n = integerIn(raw, 1, MAX_LIMIT);
      if (n === null) {
        const words = allowDefault ? '"unlimited" or "default"' : '"unlimited"';
        throw invalidValue(flag, `a positive integer or ${words}`, raw);
      }
      own[field] = n;
    }
    if (Object.keys(own).length === 0) delete limits[scope];
    else limits[scope] = own;
  }
  return changed ? limits : undefined;
}

/** `max_concurrent` and `budget` from the flags, over the key's `current` budget; "unlimited"
 * (or "none" for a budget) removes a cap. */
function readCaps(args: Args, current: KeyRecord | null): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  const concurrent = args.values.get("max-concurrent");
  if (concurrent !== undefined) {
    if (concurrent === "unlimited") raw.max_concurrent = null;
    else {
      const n = integerIn(concurrent, 1, MAX_CONCURRENT);
      if (n === null) {
        throw invalidValue("max-concurrent", 'a positive integer or "unlimited"', concurrent);
      }
      raw.max_concurrent = n;
    }
  }
  const budget: Record<string, number | null> = { ...(current?.budget ?? {}) };
  let budgetGiven = false;
  for (const flag of BUDGET_FLAGS) {
    const value = args.values.get(flag);
    if (value === undefined) continue;
    budgetGiven = true;
    const field = flag === "budget-per-day" ? "per_day" : "per_month";
    if (value === "none") budget[field] = null;
    else if (/^\d+(\.\d+)?$/.test(value)) budget[field] = Number(value);
    else {
      throw invalidValue(flag, 'an amount in currency units (like 5 or 12.50) or "none"', value);
    }
  }
  if (budgetGiven) raw.budget = budget;
  return raw;
}

/** What `read` returns; a field it refuses is a {@link UsageError} naming it (and the flag, for
 * a field inside `--guardrails`'s JSON). */
function validate<T>(read: () => T): T {
  try {
    return read();
  } catch (e) {
    if (e instanceof ValidationError) {
      const flag = /^guardrails(\[|\.|$)/.test(e.path) ? "--guardrails: " : "";
      throw new UsageError(flag + e.fieldMessage());
    }
    throw e;
  }
}
