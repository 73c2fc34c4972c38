/**
 * Whether an operator's regular expression (a `deny` guardrail's `patterns`) is safe to run on
 * every prompt and answer: V8 runs RegExps by backtracking, so a pattern such as `(a+)+b` takes
 * exponential time on a crafted text (ReDoS). A pattern is accepted only when its work per
 * starting position is bounded by a small number: no backreferences or lookarounds, no `*`,
 * `+` or `{n,}` (write `{1,40}`), no quantifier on a group that holds a quantifier or an
 * alternation, and the product of its repeat bounds at most {@link MAX_REPEAT_PRODUCT}.
 */

/** Characters of a pattern at most. */
export const MAX_PATTERN_CHARS = 200;
/** The product of a pattern's repeat bounds (`{1,10}` counts 11) at most: the work per start. */
export const MAX_REPEAT_PRODUCT = 2_000;

/** A group being read: whether it holds a quantifier or an alternation. */
interface Group {
  quantified: boolean;
  alternation: boolean;
}

/** The flags deny patterns run with. */
export const PATTERN_FLAGS = "giu";

/** Why `pattern` is refused (a sentence fragment), or `null` when it is safe to run. */
export function unsafePattern(pattern: string): string | null {
  if (pattern.length > MAX_PATTERN_CHARS) {
    return `a pattern has at most ${MAX_PATTERN_CHARS} characters`;
  }
  try {
    new RegExp(pattern, PATTERN_FLAGS);
  } catch (e) {
    return `not a valid regular expression (${e instanceof Error ? e.message : String(e)})`;
  }
  const stack: Group[] = [{ quantified: false, alternation: false }];
  let product = 1;
  /** Whether the last item read was a group that holds a quantifier or an alternation. */
  let lastGroup: Group | null = null;
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    const top = stack[stack.length - 1]!;
    if (c === "\\") {
      const next = pattern[i + 1] ?? "";
      if (/[1-9]/.test(next) || next === "k") return "backreferences are not allowed";
      // \p{...}, \u{...}, \x.. are read as one item.
      if ((next === "p" || next === "P" || next === "u") && pattern[i + 2] === "{") {
        i = pattern.indexOf("}", i) + 1;
      } else i += 2;
      lastGroup = null;
      continue;
    }
    if (c === "[") {
      // A class: its characters are literal; skip to its unescaped end.
      i++;
      while (i < pattern.length && pattern[i] !== "]") i += pattern[i] === "\\" ? 2 : 1;
      i++;
      lastGroup = null;
      continue;
    }
    if (c === "(") {
      if (
        pattern.startsWith("(?=", i) || pattern.startsWith("(?!", i) ||
        pattern.startsWith("(?<=", i) || pattern.startsWith("(?<!", i)
      ) {
        return "lookarounds are not allowed";
      }
      stack.push({ quantified: false, alternation: false });
      i += pattern.startsWith("(?:", i) ? 3 : 1;
      lastGroup = null;
      continue;
    }
    if (c === ")") {
      const closed = stack.pop()!;
      const outer = stack[stack.length - 1]!;
      outer.quantified ||= closed.quantified;
      outer.alternation ||= closed.alternation;
      lastGroup = closed;
      i++;
      continue;
    }
    if (c === "|") {
      top.alternation = true;
      lastGroup = null;
      i++;
      continue;
    }
    const bounds = quantifierAt(pattern, i);
    if (bounds !== null) {
      if (bounds.max === Infinity) {
        return "unbounded repeats (*, + or {n,}) are not allowed: give a bound, as {1,40}";
      }
      if (lastGroup !== null && (lastGroup.quantified || lastGroup.alternation)) {
        return "a repeated group may not hold a repeat or an alternation (nested quantifiers)";
      }
      product *= bounds.max + 1;
      if (product > MAX_REPEAT_PRODUCT) {
        return `its repeat bounds multiply to more than ${MAX_REPEAT_PRODUCT}: use smaller bounds`;
      }
      top.quantified = true;
      i = bounds.end;
      // A lazy or possessive mark after the quantifier.
      if (pattern[i] === "?") i++;
      lastGroup = null;
      continue;
    }
    lastGroup = null;
    i++;
  }
  return null;
}

/** The quantifier at `i` (`?`, `*`, `+`, `{n}`, `{n,}`, `{n,m}`) with where it ends, or `null`. */
function quantifierAt(pattern: string, i: number): { max: number; end: number } | null {
  const c = pattern[i];
  if (c === "?") return { max: 1, end: i + 1 };
  if (c === "*" || c === "+") return { max: Infinity, end: i + 1 };
  if (c !== "{") return null;
  const m = /^\{(\d{1,6})(,(\d{0,6}))?\}/.exec(pattern.slice(i, i + 16));
  if (!m) return null;
  const max = m[2] === undefined ? Number(m[1]) : m[3] === "" ? Infinity : Number(m[3]);
  return { max, end: i + m[0].length };
}

/**
 * The most UTF-16 code units a match of a pattern {@link unsafePattern} accepts can span: each
 * character, class or escape counted as two (one code point), groups and bounded repeats
 * followed, an alternation's longest branch. A stream holds back this much so that a match split
 * across deltas is seen whole.
 */
export function maxMatchChars(pattern: string): number {
  let i = 0;
  /** The longest match of the alternation from `i` to its `)` (or the end). */
  const alternation = (): number => {
    let longest = 0;
    let branch = 0;
    let last = 0;
    while (i < pattern.length && pattern[i] !== ")") {
      const c = pattern[i]!;
      if (c === "|") {
        longest = Math.max(longest, branch);
        branch = 0;
        last = 0;
        i++;
        continue;
      }
      const bounds = quantifierAt(pattern, i);
      if (bounds !== null) {
        // The item before repeats: `max` times in all (an unbounded repeat was refused).
        branch += last * (Math.min(bounds.max, MAX_REPEAT_PRODUCT) - 1);
        last = 0;
        i = bounds.end;
        if (pattern[i] === "?") i++;
        continue;
      }
      if (c === "(") {
        i += pattern.startsWith("(?:", i)
          ? 3
          : pattern.startsWith("(?<", i)
          ? pattern.indexOf(">", i) + 1
          : 1;
        last = alternation();
        i++;
      } else if (c === "\\") {
        const next = pattern[i + 1] ?? "";
        i = (next === "p" || next === "P" || next === "u") && pattern[i + 2] === "{"
          ? pattern.indexOf("}", i) + 1
          : i + 2;
        last = 2;
      } else if (c === "[") {
        i++;
        while (i < pattern.length && pattern[i] !== "]") i += pattern[i] === "\\" ? 2 : 1;
        i++;
        last = 2;
      } else {
        i++;
        last = c === "^" || c === "$" ? 0 : 2;
      }
      branch += last;
    }
    return Math.max(longest, branch);
  };
  let longest = 0;
  // A `)` without its `(` cannot be in a valid pattern; read on past one anyway.
  while (i < pattern.length) {
    longest = Math.max(longest, alternation());
    i++;
  }
  return longest;
}
