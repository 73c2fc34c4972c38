/**
 * Values that satisfy a JSON schema, for the simulator's tool-call arguments and JSON replies:
 * every property of the declared type, within its enum, bounds, length and format. A value the
 * caller wrote as `name=value` or `name: value` in `text` is used when it fits the schema.
 */
import type { JsonSchema } from "../../types/openai.ts";

type Schema = Record<string, unknown>;

const MAX_DEPTH = 12;

const FORMATS: Record<string, string> = {
  "date": "2025-01-01",
  "date-time": "2025-01-01T12:00:00Z",
  "time": "12:00:00",
  "email": "user@example.com",
  "uri": "https://example.com/",
  "url": "https://example.com/",
  "uuid": "00000000-0000-4000-8000-000000000000",
  "hostname": "example.com",
  "ipv4": "192.0.2.1",
  "ipv6": "2001:db8::1",
};

/** Arguments for a function whose `parameters` schema is given (an object, `{}` for none). */
export function sampleArguments(
  parameters: JsonSchema | undefined,
  text: string,
): Record<string, unknown> {
  if (parameters === undefined) return {};
  const value = sample(parameters, new Sampler(parameters, text), "", 0);
  return isSchema(value) ? value : {};
}

/** A value valid against `schema` (any JSON schema). */
export function sampleValue(schema: JsonSchema, text: string): unknown {
  return sample(schema, new Sampler(schema, text), "", 0);
}

class Sampler {
  constructor(readonly root: Schema, readonly text: string) {}

  /** The raw text written after `name=` or `name:` in the caller's message, if any. */
  hint(name: string): string | undefined {
    if (name === "" || this.text === "") return undefined;
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const m = new RegExp(
      `(?:^|[^\\p{L}\\p{N}_])${escaped}\\s*[:=]\\s*(?:"([^"]*)"|'([^']*)'|([^\\s,;]+))`,
      "u",
    ).exec(this.text);
    if (!m) return undefined;
    return m[1] ?? m[2] ?? m[3]!.replace(/[.!?)]+$/, "");
  }

  resolve(schema: Schema): Schema {
    for (let i = 0; i < 8 && typeof schema.$ref === "string"; i++) {
      const target = pointer(this.root, schema.$ref);
      if (!isSchema(target)) return {};
      schema = target;
    }
    return schema;
  }
}

function sample(raw: unknown, s: Sampler, name: string, depth: number): unknown {
  if (!isSchema(raw) || depth > MAX_DEPTH) return null;
  const schema = s.resolve(raw);
  if ("const" in schema) return schema.const;
  const hint = s.hint(name);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    const match = schema.enum.find((v) => hint !== undefined && String(v) === hint);
    return match !== undefined ? match : schema.enum[0];
  }
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0) {
      const branch = branches.find((b) => isSchema(b) && s.resolve(b).type !== "null") ??
        branches[0];
      return sample(branch, s, name, depth + 1);
    }
  }
  if (Array.isArray(schema.allOf)) return sample(mergeAll(schema, s), s, name, depth + 1);
  if ("default" in schema && hint === undefined) return schema.default;
  switch (typeOf(schema)) {
    case "object":
      return sampleObject(schema, s, depth);
    case "array":
      return sampleArray(schema, s, name, depth);
    case "integer":
      return sampleNumber(schema, true, hint);
    case "number":
      return sampleNumber(schema, false, hint);
    case "boolean":
      return hint === "false" ? false : true;
    case "null":
      return null;
    default:
      return sampleString(schema, hint);
  }
}

function typeOf(schema: Schema): string | undefined {
  const type = schema.type;
  if (typeof type === "string") return type;
  if (Array.isArray(type)) {
    return type.find((t) => t !== "null" && typeof t === "string") ?? type[0];
  }
  if (isSchema(schema.properties)) return "object";
  if (schema.items !== undefined) return "array";
  return undefined;
}

function sampleObject(schema: Schema, s: Sampler, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const properties = isSchema(schema.properties) ? schema.properties : {};
  for (const [key, sub] of Object.entries(properties)) out[key] = sample(sub, s, key, depth + 1);
  if (Array.isArray(schema.required)) {
    for (const key of schema.required) {
      if (typeof key === "string" && !(key in out)) out[key] = sample({}, s, key, depth + 1);
    }
  }
  return out;
}

function sampleArray(schema: Schema, s: Sampler, name: string, depth: number): unknown[] {
  const max = typeof schema.maxItems === "number" ? schema.maxItems : Infinity;
  const count = Math.min(
    Math.max(typeof schema.minItems === "number" ? schema.minItems : 1, 1),
    max,
  );
  const out: unknown[] = [];
  const tuple = Array.isArray(schema.prefixItems) ? schema.prefixItems : null;
  for (let i = 0; i < count; i++) {
    const items = tuple && i < tuple.length ? tuple[i] : schema.items;
    let value = sample(items === undefined ? {} : items, s, name, depth + 1);
    if (schema.uniqueItems === true && typeof value === "string" && i > 0) value += ` ${i + 1}`;
    if (schema.uniqueItems === true && typeof value === "number" && i > 0) value += i;
    out.push(value);
  }
  return out;
}

function sampleString(schema: Schema, hint: string | undefined): string {
  const format = typeof schema.format === "string" ? FORMATS[schema.format] : undefined;
  let value = hint ?? format ?? "example";
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  const max = typeof schema.maxLength === "number" ? schema.maxLength : Infinity;
  if (value.length > max) value = value.slice(0, max);
  if (value.length < min) value = value.padEnd(min, "x");
  return value;
}

function sampleNumber(schema: Schema, integer: boolean, hint: string | undefined): number {
  let lo = -Infinity;
  let hi = Infinity;
  let loOpen = schema.exclusiveMinimum === true;
  let hiOpen = schema.exclusiveMaximum === true;
  if (typeof schema.minimum === "number") lo = schema.minimum;
  if (typeof schema.maximum === "number") hi = schema.maximum;
  if (typeof schema.exclusiveMinimum === "number" && schema.exclusiveMinimum >= lo) {
    lo = schema.exclusiveMinimum;
    loOpen = true;
  }
  if (typeof schema.exclusiveMaximum === "number" && schema.exclusiveMaximum <= hi) {
    hi = schema.exclusiveMaximum;
    hiOpen = true;
  }
  const step = typeof schema.multipleOf === "number" && schema.multipleOf > 0
    ? schema.multipleOf
    : 0;
  const fits = (v: number) =>
    Number.isFinite(v) && (loOpen ? v > lo : v >= lo) && (hiOpen ? v < hi : v <= hi) &&
    (!integer || Number.isInteger(v)) &&
    (step === 0 || Math.abs(v / step - Math.round(v / step)) < 1e-9);
  const candidates = [hint === undefined || hint === "" ? NaN : Number(hint), 1, 0];
  if (step > 0 && Number.isFinite(lo)) {
    candidates.push(Math.ceil(lo / step) * step, (Math.ceil(lo / step) + 1) * step);
  }
  if (step > 0 && Number.isFinite(hi)) candidates.push(Math.floor(hi / step) * step);
  candidates.push(lo, Math.ceil(lo), Math.floor(lo) + 1, hi, Math.floor(hi), Math.ceil(hi) - 1);
  if (Number.isFinite(lo) && Number.isFinite(hi)) candidates.push((lo + hi) / 2);
  return candidates.find(fits) ?? (Number.isFinite(lo) ? lo : 0);
}

function mergeAll(schema: Schema, s: Sampler): Schema {
  const merged: Schema = { ...schema, allOf: undefined };
  delete merged.allOf;
  const properties: Schema = isSchema(schema.properties) ? { ...schema.properties } : {};
  const required = new Set<unknown>(Array.isArray(schema.required) ? schema.required : []);
  for (const part of schema.allOf as unknown[]) {
    if (!isSchema(part)) continue;
    const resolved = s.resolve(part);
    for (const [key, value] of Object.entries(resolved)) {
      if (key === "properties" && isSchema(value)) Object.assign(properties, value);
      else if (key === "required" && Array.isArray(value)) value.forEach((r) => required.add(r));
      else if (!(key in merged)) merged[key] = value;
    }
  }
  if (Object.keys(properties).length > 0) merged.properties = properties;
  if (required.size > 0) merged.required = [...required];
  return merged;
}

/** Resolves a local JSON pointer (`#/$defs/x`) against the root schema. */
function pointer(root: Schema, ref: string): unknown {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const part of ref.slice(2).split("/")) {
    const key = decodeURIComponent(part).replaceAll("~1", "/").replaceAll("~0", "~");
    if (!isSchema(node)) return undefined;
    node = node[key];
  }
  return node;
}

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
