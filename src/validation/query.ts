/**
 * A URL's query parameters read as fields, in the validation style of bodies: a handler reads
 * the parameters it takes (each one's first value), then `done()` refuses the others
 * (`unknown_parameter`, a typo) and any given more than once (`limit=1&limit=2`) that may not
 * be.
 */
import { quote } from "../quote.ts";
import { invalidValue } from "./error.ts";
import { Fields, readJson } from "./reader.ts";
import { bounded } from "./wording.ts";

/** Query fields whose `done()` also refuses repeated parameters. */
class QueryFields extends Fields {
  /** How many times each parameter was given. */
  readonly #counts: ReadonlyMap<string, number>;
  readonly #repeatable: readonly string[];

  constructor(
    values: Record<string, string>,
    counts: ReadonlyMap<string, number>,
    repeatable: readonly string[],
  ) {
    super(readJson(values), values);
    this.#counts = counts;
    this.#repeatable = repeatable;
  }

  override done(): void {
    super.done();
    for (const [name, count] of this.#counts) {
      if (count > 1 && !this.#repeatable.includes(name)) {
        throw invalidValue(name, `expected one value, but got ${count}`);
      }
    }
  }
}

/** `params` as fields (see the module doc); those named in `repeatable` may come more than once
 * (read their values with `params.getAll`). */
export function queryFields(params: URLSearchParams, repeatable: readonly string[] = []): Fields {
  const values: Record<string, string> = Object.create(null);
  const counts = new Map<string, number>();
  for (const [name, value] of params) {
    if (!(name in values)) values[name] = value;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return new QueryFields(values, counts, repeatable);
}

/** A page size parameter `name` (`text` as sent): an integer from 1 to `max`, `fallback` when
 * absent. */
export function pageLimit(
  name: string,
  text: string | undefined,
  max: number,
  fallback: number,
): number {
  if (text === undefined) return fallback;
  const limit = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(limit >= 1 && limit <= max)) {
    throw invalidValue(name, `expected ${bounded("an integer", 1, max)}, but got ${quote(text)}`);
  }
  return limit;
}
