/** The field rules and small readers that the config's section readers share. */
import type { ArrayRules, Reader } from "../validation/reader.ts";

/** A config string: non-empty, at most 256 characters (a record must fit a KV value). */
export const TEXT = { nonEmpty: true, maxLength: 256 } as const;
export const OPTIONAL_TEXT = { ...TEXT, optional: true } as const;
/** A count that may be left out. */
export const COUNT = { optional: true, min: 1 } as const;
/** A count that may be left out, or `null` for none (unlimited, unknown). */
export const NULLABLE_COUNT = { optional: true, nullable: true, min: 1 } as const;
/** A string list: at most 64 items. */
export const STRINGS = { optional: true, maxItems: 64 } as const;

/** A list of config strings, or `undefined` when absent. */
export function readStrings(r: Reader, rules: ArrayRules = STRINGS): string[] | undefined {
  return r.array({ ...rules, optional: true })?.map((item) => item.string(TEXT));
}

/** An optional object field as a reader of `{}` when absent or `null` (its defaults). */
export function orEmpty(r: Reader): Reader {
  return r.value === undefined || r.value === null ? r.with({}) : r;
}
