import { describe, FieldError, Fields, LIMIT_SCOPES, type WindowLimit } from "../config.ts";
import type { KeyFields } from "./keys.ts";
import type { KeyRecord } from "./principal.ts";

const NAME_MAX = 200;
const MODEL_PATTERN = /^[A-Za-z0-9*][A-Za-z0-9._:\/*-]{0,127}$/;
/** Ids or globs of a key's allow-list at most (its record must fit a KV value). */
const MAX_MODELS = 256;

/**
 * Validates the fields of a key to create (`name` required) or to change (every field
 * optional, at least one given; `disabled` too). Throws {@link FieldError} naming the field.
 */
export function readKeyFields(value: unknown, mode: "create"): KeyFields & { name: string };
export function readKeyFields(value: unknown, mode: "update"): KeyFields;
export function readKeyFields(value: unknown, mode: "create" | "update"): KeyFields {
  const f = Fields.of(value, "");
  const fields: KeyFields = {};
  if (mode === "create" || f.has("name")) {
    const name = f.string("name");
    if (name.length > NAME_MAX) {
      throw new FieldError("name", `must be at most ${NAME_MAX} characters`);
    }
    fields.name = name;
  }
  if (f.has("models")) fields.models = readModels(f.raw("models"));
  if (f.has("preview")) fields.preview = f.bool("preview", false);
  if (f.has("limits")) fields.limits = readLimitOverrides(f.raw("limits"));
  if (mode === "update" && f.has("disabled")) fields.disabled = f.bool("disabled", false);
  f.done();
  if (mode === "update" && Object.keys(fields).length === 0) {
    throw new FieldError(
      "(root)",
      "nothing to change: give one or more of name, models, preview, limits, disabled",
    );
  }
  return fields;
}

function readModels(value: unknown): string[] | null {
  if (value === null) return null;
  if (!Array.isArray(value)) {
    throw new FieldError(
      "models",
      `must be an array of model ids or globs, or null for all, not ${describe(value)}`,
    );
  }
  if (value.length > MAX_MODELS) {
    throw new FieldError(
      "models",
      `must list at most ${MAX_MODELS} ids or globs, not ${value.length}`,
    );
  }
  return value.map((item, i) => {
    if (typeof item !== "string" || !MODEL_PATTERN.test(item)) {
      throw new FieldError(
        `models[${i}]`,
        `must be a model id or a glob with * (letters, digits, . _ : / - *), not ${describe(item)}`,
      );
    }
    return item;
  });
}

function readLimitOverrides(value: unknown): KeyRecord["limits"] {
  const f = Fields.of(value, "limits");
  const out: KeyRecord["limits"] = {};
  for (const scope of LIMIT_SCOPES) {
    if (!f.has(scope)) continue;
    const w = Fields.of(f.raw(scope), f.at(scope));
    const window: Partial<WindowLimit> = {};
    for (const name of ["per_minute", "per_day"] as const) {
      if (w.has(name)) window[name] = w.nullableInt(name, null);
    }
    w.done();
    out[scope] = window;
  }
  f.done();
  return out;
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
  };
}
