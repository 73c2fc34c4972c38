type Schema = Record<string, unknown>;

/** String formats structured outputs accept. */
const FORMATS = new Set([
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "uri",
  "ipv4",
  "ipv6",
  "uuid",
]);

/** Keywords that only name or describe: dropped rather than moved into the description. */
const META = new Set(["$schema", "$id", "$comment"]);

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A JSON schema as Anthropic's structured outputs accept it (`output_config.format.schema`,
 * the `input_schema` of a `strict` tool), made the way Anthropic's own SDKs make it: kept are
 * `type`, `$ref`, `$defs`/`definitions`, `anyOf` (`oneOf` becomes `anyOf`), `allOf`, `enum`,
 * `const`, `description`, `title`, `properties` with `required`, `items`, a supported string
 * `format` and `minItems` of 0 or 1; every object gets `additionalProperties: false`; any other
 * keyword (`minimum`, `maximum`, `minLength`, `pattern`, `maxItems`, `default`...) is written into
 * the description as `{minimum: 1, maximum: 5}`, so the model still reads it; `$schema`, `$id`
 * and `$comment` are dropped. The input is not changed.
 */
export function toAnthropicStrictSchema(schema: Schema): Schema {
  const rest: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!META.has(key)) rest[key] = value;
  }
  const take = (key: string): unknown => {
    const value = rest[key];
    delete rest[key];
    return value;
  };
  const out: Schema = {};
  const ref = take("$ref");
  if (ref !== undefined) return { $ref: ref };
  for (const key of ["$defs", "definitions"]) {
    const defs = take(key);
    if (isSchema(defs)) out[key] = mapValues(defs, strictOrSame);
  }
  const type = take("type");
  const anyOf = take("anyOf") ?? take("oneOf");
  const allOf = take("allOf");
  if (Array.isArray(anyOf)) out.anyOf = anyOf.map(strictOrSame);
  else if (Array.isArray(allOf)) out.allOf = allOf.map(strictOrSame);
  if (type !== undefined) out.type = type;
  for (const key of ["description", "title", "const", "enum"]) {
    const value = take(key);
    if (value !== undefined) out[key] = value;
  }
  const types = [type].flat();
  if (types.includes("object")) {
    const properties = take("properties");
    out.properties = isSchema(properties) ? mapValues(properties, strictOrSame) : {};
    take("additionalProperties");
    out.additionalProperties = false;
    const required = take("required");
    if (required !== undefined) out.required = required;
  }
  if (types.includes("string") && FORMATS.has(rest.format as string)) out.format = take("format");
  if (types.includes("array")) {
    const items = take("items");
    if (items !== undefined) out.items = strictOrSame(items);
    if (rest.minItems === 0 || rest.minItems === 1) out.minItems = take("minItems");
  }
  const moved = Object.entries(rest);
  if (moved.length > 0) {
    const said = `{${moved.map(([key, value]) => `${key}: ${JSON.stringify(value)}`).join(", ")}}`;
    out.description = typeof out.description === "string" && out.description !== ""
      ? `${out.description}\n\n${said}`
      : said;
  }
  return out;
}

/** A subschema made strict; `true`/`false` schemas stay as they are. */
function strictOrSame(value: unknown): unknown {
  return isSchema(value) ? toAnthropicStrictSchema(value) : value;
}

function mapValues(obj: Schema, f: (value: unknown) => unknown): Schema {
  return Object.fromEntries(Object.entries(obj).map(([key, value]) => [key, f(value)]));
}
