/**
 * The phrases validation messages are made of, so that the same mistake reads the same way
 * everywhere: `expected <what>, but got <this>`.
 */

/** A JSON value's type as messages name it: `a string`, `an array`, `null`... */
export function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return "a string";
    case "number":
      return Number.isFinite(value) ? "a number" : "a non-finite number";
    case "boolean":
      return "a boolean";
    case "object":
      return "an object";
    case "undefined":
      return "nothing";
    default:
      return typeof value;
  }
}

/** The allowed values as a message lists them: `"a"`, `"a" or "b"`, `"a", "b" or "c"`. */
export function alternatives(values: readonly unknown[]): string {
  const listed = values.map((v) => JSON.stringify(v));
  const last = listed.pop() ?? "nothing";
  return listed.length === 0 ? last : `${listed.join(", ")} or ${last}`;
}

/** `an integer from 1 to 10`, `a number of at least 0`, `an integer`: a kind of number and its
 * bounds (bounds at the safe-integer limits are not worth naming). */
export function bounded(kind: string, min: number, max: number): string {
  const low = min > Number.MIN_SAFE_INTEGER;
  const high = max < Number.MAX_SAFE_INTEGER;
  if (low && high) return `${kind} from ${min} to ${max}`;
  if (low) return `${kind} of at least ${min}`;
  if (high) return `${kind} of at most ${max}`;
  return kind;
}

/** `1 item`, `3 items`, `1 character`... */
export function count(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? "" : "s"}`;
}
