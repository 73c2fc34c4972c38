import type { OutputFormat } from "../../canonical/conversation.ts";
import { quote } from "../../quote.ts";
import { invalidValue } from "../../routes/params.ts";
import {
  absent,
  invalidType,
  isObject,
  kindOf,
  missing,
  optionalBoolean,
  optionalString,
} from "./checks.ts";

const SCHEMA_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** `response_format`: `text`, `json_object` (any JSON) or `json_schema` ({name, schema?,
 * strict?, description?}). */
export function parseResponseFormat(value: unknown): OutputFormat {
  if (absent(value)) return { type: "text" };
  if (!isObject(value)) {
    throw invalidType(
      `\`response_format\` must be an object like {"type": "json_object"}, not ${kindOf(value)}.`,
      "response_format",
    );
  }
  const type = value.type;
  if (type === "text") return { type: "text" };
  if (type === "json_object") return { type: "json" };
  if (type !== "json_schema") {
    const message = `\`response_format.type\` must be "text", "json_object" or "json_schema", not ${
      type === undefined ? "missing" : quote(type)
    }.`;
    throw type === undefined
      ? missing(message, "response_format.type")
      : invalidValue(message, "response_format.type");
  }
  const spec = value.json_schema;
  const at = "response_format.json_schema";
  if (!isObject(spec)) {
    const message = "`response_format.json_schema` must be an object with a `name` and a `schema`.";
    throw absent(spec) ? missing(message, at) : invalidType(message, at);
  }
  if (typeof spec.name !== "string" || !SCHEMA_NAME.test(spec.name)) {
    const message =
      "`response_format.json_schema.name` must be a string of letters, digits, _ and - (at most 64).";
    throw absent(spec.name)
      ? missing(message, `${at}.name`)
      : typeof spec.name === "string"
      ? invalidValue(message, `${at}.name`)
      : invalidType(message, `${at}.name`);
  }
  if (!absent(spec.schema) && !isObject(spec.schema)) {
    throw invalidType(
      "`response_format.json_schema.schema` must be a JSON schema object.",
      `${at}.schema`,
    );
  }
  const format: OutputFormat = {
    type: "json_schema",
    name: spec.name,
    schema: isObject(spec.schema) ? spec.schema : {},
    strict: optionalBoolean(spec, "strict", `${at}.strict`) ?? false,
  };
  const description = optionalString(spec, "description", `${at}.description`);
  if (description !== null) format.description = description;
  return format;
}
