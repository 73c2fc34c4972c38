/** "Did you mean": the known name nearest to a misspelt one, for unknown fields and flags. */
import { ValidationError } from "../validation/error.ts";
import type { Fields } from "../validation/reader.ts";

/** Rejects the first field that was not read, naming the closest known field when one is
 * near (a misspelt capability is named as unknown rather than leaving a model serving
 * nothing). */
export function doneWithSuggestion(f: Fields, known: readonly string[]): void {
  try {
    f.done();
  } catch (e) {
    if (!(e instanceof ValidationError) || e.code !== "unknown_parameter") throw e;
    const name = e.path.slice(e.path.lastIndexOf(".") + 1);
    const closest = closestName(name, known);
    if (closest === null) throw e;
    throw new ValidationError(
      "unknown_parameter",
      e.path,
      `unknown field; did you mean "${closest}"?`,
      `${e.message} Did you mean '${closest}'?`,
    );
  }
}

/** The name in `known` nearest to `name` by edit distance, if within a third of its length. */
export function closestName(name: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of known) {
    const d = editDistance(name.toLowerCase(), candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

/** Levenshtein distance (names are short). */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(
        row[j]! + 1,
        next[j - 1]! + 1,
        row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    row = next;
  }
  return row[b.length]!;
}
