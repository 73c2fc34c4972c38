import { invalidRequest } from "../errors.ts";

/** A JSON value's type as error messages name it ("a string", "an array", "null"…). */
export function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "number" && !Number.isFinite(value)) return "a non-finite number";
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean"
    ? `a ${typeof value}`
    : typeof value;
}

/** 400 naming `param`: it has the wrong JSON type. */
export function wrongType(param: string, expected: string, value: unknown) {
  return invalidRequest(
    `Invalid type for '${param}': expected ${expected}, but got ${typeName(value)}.`,
    param,
    "invalid_type",
  );
}

/** `body[name]`, with `null` treated as absent (as OpenAI does for optional fields). */
export function optionalField(body: Record<string, unknown>, name: string): unknown {
  const value = body[name];
  return value === null ? undefined : value;
}

/** A required string field; 400 naming it when missing or not a string. */
export function requiredString(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (value === undefined || value === null) {
    throw invalidRequest(
      `Missing required parameter: '${name}'.`,
      name,
      "missing_required_parameter",
    );
  }
  if (typeof value !== "string") throw wrongType(name, "a string", value);
  return value;
}

/** 400 naming `param`: its value is not allowed (code `invalid_value`). */
export function invalidValue(message: string, param: string) {
  return invalidRequest(message, param, "invalid_value");
}
