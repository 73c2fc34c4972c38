import type { OutputFormat } from "../../canonical/conversation.ts";
import { type Fields, OPTIONAL } from "../../validation/reader.ts";

const TYPES = ["text", "json_object", "json_schema"] as const;
const SCHEMA_NAME = {
  pattern: /^[A-Za-z0-9_-]{1,64}$/,
  format: "1 to 64 letters, digits, underscores or dashes",
} as const;
const SCHEMA = { optional: true, expected: "a JSON schema object" } as const;

/** `response_format`: `text`, `json_object` (any JSON) or `json_schema` ({name, schema?,
 * strict?, description?}). */
export function parseResponseFormat(format: Fields | undefined): OutputFormat {
  if (format === undefined) return { type: "text" };
  const type = format.oneOf("type", TYPES);
  if (type === "text") return { type: "text" };
  if (type === "json_object") return { type: "json" };
  const spec = format.object("json_schema");
  const output: OutputFormat = {
    type: "json_schema",
    name: spec.string("name", SCHEMA_NAME),
    schema: spec.object("schema", SCHEMA)?.value ?? {},
    strict: spec.boolean("strict", OPTIONAL) ?? false,
  };
  const description = spec.string("description", OPTIONAL);
  if (description !== undefined) output.description = description;
  return output;
}
