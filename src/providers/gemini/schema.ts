/**
 * JSON schemas (tool parameters, structured output) as Gemini takes them in
 * `parametersJsonSchema` and `responseJsonSchema`: the JSON Schema subset its documentation
 * lists. Other keywords are left out (`$schema`, `not`, `if`/`then`/`else`, `allOf`,
 * `patternProperties`, `dependentRequired`, `exclusiveMinimum`/`exclusiveMaximum`,
 * `multipleOf`, `uniqueItems`, `default`, `examples`...); `oneOf` becomes `anyOf`, `const` a
 * one-value `enum`, and `definitions` `$defs` (with the `$ref`s into it).
 */

/** Keywords whose value is kept as it is. */
const PLAIN = new Set([
  "$id",
  "$anchor",
  "type",
  "format",
  "title",
  "description",
  "enum",
  "minItems",
  "maxItems",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "pattern",
  "minProperties",
  "maxProperties",
  "required",
  "propertyOrdering",
  "nullable",
]);
/** Keywords holding one schema. */
const ONE = new Set(["items", "additionalProperties"]);
/** Keywords holding a list of schemas. */
const LIST = new Set(["anyOf", "oneOf", "prefixItems"]);
/** Keywords holding schemas by name. */
const NAMED = new Set(["properties", "$defs", "definitions"]);

/** `schema` with only what Gemini accepts (see the module doc). */
export function toGeminiSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (PLAIN.has(key)) out[key] = value;
    else if (key === "$ref") {
      out.$ref = typeof value === "string" ? value.replace(/^#\/definitions\//, "#/$defs/") : value;
    } else if (ONE.has(key)) out[key] = isSchema(value) ? toGeminiSchema(value) : value;
    else if (LIST.has(key) && Array.isArray(value)) {
      const name = key === "oneOf" ? "anyOf" : key;
      const list = value.map((s) => isSchema(s) ? toGeminiSchema(s) : s);
      out[name] = name in out ? [...(out[name] as unknown[]), ...list] : list;
    } else if (NAMED.has(key) && isSchema(value)) {
      out[key === "definitions" ? "$defs" : key] = Object.fromEntries(
        Object.entries(value).map(([name, s]) => [name, isSchema(s) ? toGeminiSchema(s) : s]),
      );
    } else if (key === "const" && !("enum" in schema)) out.enum = [value];
  }
  return out;
}

function isSchema(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
