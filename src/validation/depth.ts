/**
 * How deep a request body may nest. A JSON schema needs a few dozen levels; `JSON.stringify`,
 * which echoes bodies back (the Responses API's `tools`) and forwards them upstream, runs out
 * of stack near 7,000, and JSON.parse takes any depth. So the limit is checked once, on the
 * parsed body, before anything walks it.
 */

/** The most levels of arrays and objects a request body may have, the body itself included. */
export const MAX_DEPTH = 256;

/** The path (`tools[0].parameters.properties.a`) of the first array or object in `value` at
 * a depth over `max` (the root at depth 1), or `null` when there is none. */
export function tooDeep(value: object, max = MAX_DEPTH): string | null {
  const path: (string | number)[] = [];
  return descend(value, max - 1, path) ? pathText(path) : null;
}

/** Whether `value` holds an array or object more than `left` levels below it; leaves the way
 * to it in `path`. Recursion is bounded by `left`. */
function descend(value: object, left: number, path: (string | number)[]): boolean {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item !== "object" || item === null) continue;
      path.push(i);
      if (left === 0 || descend(item, left - 1, path)) return true;
      path.pop();
    }
    return false;
  }
  for (const key in value) {
    const item: unknown = (value as Record<string, unknown>)[key];
    if (typeof item !== "object" || item === null) continue;
    path.push(key);
    if (left === 0 || descend(item, left - 1, path)) return true;
    path.pop();
  }
  return false;
}

function pathText(path: readonly (string | number)[]): string {
  let text = "";
  for (const key of path) {
    text += typeof key === "number" ? `[${key}]` : text === "" ? key : `.${key}`;
  }
  return text;
}
