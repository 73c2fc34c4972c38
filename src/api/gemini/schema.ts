/**
 * Gemini's `Schema` (the OpenAPI 3.0 subset of `parameters` and `responseSchema`, with types
 * in capitals: `OBJECT`, `STRING`) as JSON Schema, the canonical model's: types in lower case,
 * `nullable: true` as a `"null"` type beside the others, `propertyOrdering` left out (JSON
 * Schema has no such keyword), everything else as written, nested schemas alike.
 */

/** Keywords holding one schema. */
const ONE = new Set(["items", "additionalProperties"]);
/** Keywords holding a list of schemas. */
const LIST = new Set(["anyOf", "oneOf", "allOf", "prefixItems"]);
/** Keywords holding schemas by name. */
const NAMED = new Set(["properties", "$defs", "definitions"]);

/** `schema` (Gemini's `Schema`) as JSON Schema (see the module doc). */
export function fromGeminiSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "type") out.type = typeof value === "string" ? value.toLowerCase() : value;
    else if (key === "nullable" || key === "propertyOrdering") continue;
    else if (ONE.has(key) && isSchema(value)) out[key] = fromGeminiSchema(value);
    else if (LIST.has(key) && Array.isArray(value)) {
      out[key] = value.map((s) => isSchema(s) ? fromGeminiSchema(s) : s);
    } else if (NAMED.has(key) && isSchema(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([name, s]) => [name, isSchema(s) ? fromGeminiSchema(s) : s]),
      );
    } else out[key] = value;
  }
  if (schema.nullable === true && typeof out.type === "string") out.type = [out.type, "null"];
  return out;
}

function isSchema(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
