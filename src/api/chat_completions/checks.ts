/**
 * The chat front door's field checks: each failure is a 400 `invalid_request_error` with a
 * string code (`missing_required_parameter`, `invalid_type`, `invalid_value`) and the `param`
 * it names, and a message that says what was expected and quotes (briefly) what came.
 */
import { invalidRequest } from "../../errors.ts";
import { quote } from "../../quote.ts";
import { invalidValue } from "../../routes/params.ts";

/** A JSON object as parsed from a request body. */
export type Obj = Record<string, unknown>;

/** 400 `missing_required_parameter` naming `param`. */
export function missing(message: string, param: string) {
  return invalidRequest(message, param, "missing_required_parameter");
}

/** 400 `invalid_type` naming `param`. */
export function invalidType(message: string, param: string) {
  return invalidRequest(message, param, "invalid_type");
}

/** Whether a parsed JSON value is an object (not an array or null). */
export function isObject(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a field is absent: `null` counts as not sent, as OpenAI has it. */
export function absent(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

/** How a JSON value reads in an error message: `the string "x"`, `the number 3`, `null`. */
export function kindOf(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${quote(value)}`;
  if (typeof value === "object") return "an object";
  return `${typeof value === "number" ? "the number" : "the boolean"} ${String(value)}`;
}

/** `" (it is missing)"` for an absent value, else `, not <value>`: the end of a message that
 * lists what is allowed. */
export function notThis(value: unknown): string {
  return value === undefined ? " (it is missing)" : `, not ${quote(value)}`;
}

/** `obj[key]` as a number from `min` to `max`, or `null` when not sent. */
export function optionalNumber(
  obj: Obj,
  key: string,
  min: number,
  max: number,
  param = key,
): number | null {
  const v = obj[key];
  if (absent(v)) return null;
  if (typeof v !== "number" || !Number.isFinite(v)) {
    throw invalidType(`\`${param}\` must be a number, not ${kindOf(v)}.`, param);
  }
  if (v < min || v > max) {
    throw invalidValue(`\`${param}\` must be between ${min} and ${max}, not ${v}.`, param);
  }
  return v;
}

/** `obj[key]` as an integer of at least `min`, or `null` when not sent. */
export function optionalInteger(obj: Obj, key: string, min: number, param = key): number | null {
  const v = obj[key];
  if (absent(v)) return null;
  if (typeof v !== "number" || !Number.isSafeInteger(v)) {
    throw invalidType(`\`${param}\` must be an integer, not ${kindOf(v)}.`, param);
  }
  if (v < min) {
    throw invalidValue(
      min === 1
        ? `\`${param}\` must be a positive integer, not ${v}.`
        : `\`${param}\` must be at least ${min}, not ${v}.`,
      param,
    );
  }
  return v;
}

/** `obj[key]` as a boolean, or `null` when not sent. */
export function optionalBoolean(obj: Obj, key: string, param = key): boolean | null {
  const v = obj[key];
  if (absent(v)) return null;
  if (typeof v !== "boolean") {
    throw invalidType(`\`${param}\` must be true or false, not ${kindOf(v)}.`, param);
  }
  return v;
}

/** `obj[key]` as a string, or `null` when not sent. */
export function optionalString(obj: Obj, key: string, param = key): string | null {
  const v = obj[key];
  if (absent(v)) return null;
  if (typeof v !== "string") {
    throw invalidType(`\`${param}\` must be a string, not ${kindOf(v)}.`, param);
  }
  return v;
}
