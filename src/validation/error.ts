/**
 * The one error of input validation (DESIGN §7): a 400 `invalid_request_error` with a string
 * `code` and the `param` at fault, worded the same way for the same mistake on every endpoint,
 * in the admin API and in the config file.
 */
import { ApiError } from "../errors.ts";
import { clipMiddle } from "../quote.ts";
import { typeName } from "./wording.ts";

/** The codes a validation error carries. */
export type ValidationCode =
  | "missing_required_parameter"
  | "invalid_type"
  | "invalid_value"
  | "unknown_parameter"
  | "unsupported_parameter"
  | "invalid_image";

/** Characters of a path quoted in a message at most: its start and its end, which names the
 * field (a path can hold a caller's object keys). */
const PATH_CHARS = 200;

/** A field that is missing, of the wrong type, or holds a value that is not allowed. */
export class ValidationError extends ApiError {
  /** The field's path (`messages[2].content[0].image_url.url`); `""` for the whole document. */
  readonly path: string;
  /** What is wrong, without the path (`expected a string, but got a number`): the part of the
   * message that a config file's error shows after the field. */
  readonly reason: string;

  constructor(code: ValidationCode, path: string, reason: string, message: string) {
    super(400, "invalid_request_error", message, { code, param: path === "" ? null : path });
    this.name = "ValidationError";
    this.path = path;
    this.reason = reason;
  }

  /** The reason alone: Anthropic's shape puts the path before it (`messages.0: reason`). */
  protected override reasonAlone(): string {
    return this.reason;
  }

  /** `path: reason`, as a config file's errors read (`models[3].provider: unknown provider ...`). */
  fieldMessage(): string {
    return `${this.path === "" ? "(root)" : this.path}: ${this.reason}`;
  }
}

/** How a message names the field: `'model'`, or `the request body` for the root. */
function where(path: string): string {
  return path === "" ? "the request body" : `'${clipMiddle(path, PATH_CHARS)}'`;
}

/** `Missing required parameter: 'model'.`, then `note` (a sentence) when given. */
export function missingParameter(path: string, note?: string): ValidationError {
  const message = `Missing required parameter: ${where(path)}.`;
  return new ValidationError(
    "missing_required_parameter",
    path,
    "missing required parameter",
    note === undefined ? message : `${message} ${note}`,
  );
}

/** `Invalid type for 'model': expected a string, but got a number.` */
export function invalidType(path: string, expected: string, value: unknown): ValidationError {
  const reason = `expected ${expected}, but got ${typeName(value)}`;
  return new ValidationError(
    "invalid_type",
    path,
    reason,
    `Invalid type for ${where(path)}: ${reason}.`,
  );
}

/** `Invalid value for 'size': <reason>.` (code `invalid_value`, or a more precise one). */
export function invalidValue(
  path: string,
  reason: string,
  code: "invalid_value" | "invalid_image" = "invalid_value",
): ValidationError {
  return new ValidationError(code, path, reason, `Invalid value for ${where(path)}: ${reason}.`);
}

/** `Unknown parameter: 'colour'.`: a field of an object that takes only known ones. */
export function unknownParameter(path: string): ValidationError {
  return new ValidationError(
    "unknown_parameter",
    path,
    "unknown parameter",
    `Unknown parameter: ${where(path)}.`,
  );
}

/** `Unsupported parameter: 'n'.`, then `note` (a sentence saying why): a well-formed field that
 * the chosen model does not take. */
export function unsupportedParameter(path: string, note: string): ValidationError {
  return new ValidationError(
    "unsupported_parameter",
    path,
    `unsupported parameter. ${note}`,
    `Unsupported parameter: ${where(path)}. ${note}`,
  );
}
