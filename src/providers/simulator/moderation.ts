import { MODERATION_CATEGORIES, type ModerationCategory } from "../../config/types.ts";
import { embeddedText } from "../../images/metadata.ts";
import { pairInputs } from "../../moderation/pairing.ts";
import {
  type CategoryScores,
  finalizeResult,
  liftParents,
  zeroScores,
} from "../../moderation/result.ts";
import type { ModerationRequest, ModerationResult } from "../../types/openai.ts";
import type { CallContext } from "../types.ts";
import {
  GROUPS,
  LEXICON,
  type LexiconEntry,
  NEGATED_WEIGHT,
  NEGATORS,
} from "./moderation_lexicon.ts";
import { canonicalText } from "./normalize_text.ts";
import { stopIfAborted } from "./abort.ts";

/**
 * A lexicon pattern as a regular expression over canonical text, kept as a tree. The patterns
 * are not run as RegExps (their backtracking took 18 s on a 2 KB "i will killll...x"): they are
 * compiled into one automaton that reads each character once per match start (see matchStarts).
 */
type Expr =
  /** One character out of `chars`. */
  | { kind: "char"; chars: string }
  | { kind: "seq" | "alt"; items: readonly Expr[] }
  /** `optional`: the item or nothing; `repeat`: the item one or more times. */
  | { kind: "optional" | "repeat"; item: Expr };

const WORD_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789";
const char = (chars: string): Expr => ({ kind: "char", chars });
const seq = (...items: Expr[]): Expr => ({ kind: "seq", items });
const alt = (items: Expr[]): Expr => ({ kind: "alt", items });
const optional = (item: Expr): Expr => ({ kind: "optional", item });
const repeat = (item: Expr): Expr => ({ kind: "repeat", item });

/** Between two words: a space or nothing (glued words match too). */
const GAP = optional(char(" "));
/** One other word, with its space before it. */
const OTHER_WORD = seq(char(" "), repeat(char(WORD_CHARS)));

/** One word: each letter may repeat; `*` allows any ending; `@name` is any phrase of a group. */
function wordExpr(word: string): Expr {
  if (word.startsWith("@")) {
    const group = GROUPS[word.slice(1)];
    if (!group) throw new Error(`unknown lexicon group ${word}`);
    return alt(group.map(phraseExpr));
  }
  const m = /^([a-z0-9]+)(\*?)$/.exec(word);
  if (!m) throw new Error(`invalid lexicon word ${JSON.stringify(word)}`);
  const letters = [...m[1]!].map((c) => /[a-z]/.test(c) ? repeat(char(c)) : char(c));
  return m[2] ? seq(...letters, optional(repeat(char(WORD_CHARS)))) : seq(...letters);
}

const phraseExpr = (phrase: string): Expr =>
  seq(
    ...phrase.split(" ").flatMap((word, i) => i === 0 ? [wordExpr(word)] : [GAP, wordExpr(word)]),
  );

/** A lexicon pattern (syntax in moderation_lexicon.ts) as an expression. */
function patternExpr(pattern: string): Expr {
  return seq(
    ...pattern.split(" + ").map((rawSlot, i) => {
      const slot = rawSlot.trim();
      if (slot === "~") {
        return seq(optional(OTHER_WORD), optional(OTHER_WORD), optional(OTHER_WORD));
      }
      const optionalSlot = slot.endsWith("?");
      const body = alt((optionalSlot ? slot.slice(0, -1) : slot).split("|").map(phraseExpr));
      const gapped = i === 0 ? body : seq(GAP, body);
      return optionalSlot ? optional(gapped) : gapped;
    }),
  );
}

/** The positions (character leaves) of an expression being compiled, and what may follow each. */
interface Positions {
  chars: string[];
  follow: Set<number>[];
}

/** Of a subexpression: whether it matches "", and its first and last positions. */
interface Fragment {
  nullable: boolean;
  first: number[];
  last: number[];
}

function link(from: readonly number[], to: readonly number[], positions: Positions): void {
  for (const p of from) for (const q of to) positions.follow[p]!.add(q);
}

function concat(a: Fragment, b: Fragment, positions: Positions): Fragment {
  link(a.last, b.first, positions);
  return {
    nullable: a.nullable && b.nullable,
    first: a.nullable ? [...a.first, ...b.first] : a.first,
    last: b.nullable ? [...a.last, ...b.last] : b.last,
  };
}

/** Adds the positions of an expression (Glushkov's construction) and returns its fragment. */
function build(expr: Expr, positions: Positions): Fragment {
  switch (expr.kind) {
    case "char": {
      const p = positions.chars.push(expr.chars) - 1;
      positions.follow.push(new Set());
      return { nullable: false, first: [p], last: [p] };
    }
    case "optional":
      return { ...build(expr.item, positions), nullable: true };
    case "repeat": {
      const fragment = build(expr.item, positions);
      link(fragment.last, fragment.first, positions);
      return fragment;
    }
    case "alt": {
      const fragments = expr.items.map((item) => build(item, positions));
      return {
        nullable: fragments.some((f) => f.nullable),
        first: fragments.flatMap((f) => f.first),
        last: fragments.flatMap((f) => f.last),
      };
    }
    case "seq":
      return expr.items.map((item) => build(item, positions))
        .reduce((a, b) => concat(a, b, positions), { nullable: true, first: [], last: [] });
  }
}

/** Positions grouped by the characters that enter them. */
function byChar(targets: Iterable<number>, chars: readonly string[]): Map<string, number[]> {
  const map = new Map<string, number[]>();
  for (const q of targets) {
    for (const c of chars[q]!) map.set(c, [...map.get(c) ?? [], q]);
  }
  return map;
}

/**
 * A lexicon compiled into one position automaton over canonical text. Position 0 is the start,
 * before a match's first character; every other position is a character of one entry's pattern,
 * and reading a character moves each position to the positions that may follow it with it.
 */
export interface CompiledLexicon {
  /** Per position: the positions the next character enters, by character. */
  next: readonly ReadonlyMap<string, readonly number[]>[];
  /** Per position: the index of its entry (-1 for the start). */
  owner: readonly number[];
  /** Per position: whether a match of its entry may end there. */
  accepting: readonly boolean[];
  /** Per entry: its weights. */
  weights: readonly (readonly [ModerationCategory, number])[][];
}

/** Compiles lexicon entries (pattern syntax in moderation_lexicon.ts). */
export function compileLexicon(entries: readonly LexiconEntry[]): CompiledLexicon {
  const positions: Positions = { chars: [""], follow: [new Set()] };
  const owner = [-1];
  const accepting = [false];
  entries.forEach((entry, index) => {
    const fragment = build(patternExpr(entry.pattern), positions);
    if (fragment.nullable) throw new Error(`lexicon pattern "${entry.pattern}" matches empty text`);
    link([0], fragment.first, positions);
    while (owner.length < positions.chars.length) owner.push(index);
    while (accepting.length < positions.chars.length) accepting.push(false);
    for (const p of fragment.last) accepting[p] = true;
  });
  return {
    next: positions.follow.map((targets) => byChar(targets, positions.chars)),
    owner,
    accepting,
    weights: entries.map((e) => Object.entries(e.weights) as [ModerationCategory, number][]),
  };
}

/** The simulator's lexicon, compiled (~17 ms, ~7.5 MB of heap: built when first needed, by the
 * provider that classifies, not at import). */
export function compileSimulatorLexicon(): CompiledLexicon {
  return compileLexicon(LEXICON);
}

/** How many matches of one pattern count (each counting half the one before). */
const MAX_MATCHES = 3;

/** Counts a matcher's work: one step per character read and per position moved. */
export interface StepCounter {
  steps: number;
}

/**
 * A set of positions the automaton can be in at once. The sets met while matching one text are
 * kept with their moves, so a move is worked out once and then costs one lookup (on a long
 * "kiiii...ll" run: 3 steps a character instead of 67). At most one set is added per character
 * read (2 000 sets on 100 KB of random lexicon words).
 */
interface State {
  positions: readonly number[];
  /** The entries a match may end in here. */
  accepts: readonly number[];
  next: Map<string, State>;
}

/** One text's matching: the lexicon, the states met so far (by their sorted positions), the
 * state before a match's first character, and the work counter. */
interface Matching {
  lexicon: CompiledLexicon;
  states: Map<string, State>;
  start: State;
  counter: StepCounter;
}

function stateOf(
  lexicon: CompiledLexicon,
  states: Map<string, State>,
  positions: number[],
): State {
  const key = positions.sort((a, b) => a - b).join();
  const known = states.get(key);
  if (known) return known;
  const accepts = positions.filter((p) => lexicon.accepting[p]).map((p) => lexicon.owner[p]!);
  const state = { positions, accepts: [...new Set(accepts)], next: new Map() };
  states.set(key, state);
  return state;
}

/** The state after reading `c` in `state`. */
function advance(m: Matching, state: State, c: string): State {
  m.counter.steps++;
  const known = state.next.get(c);
  if (known) return known;
  const targets = new Set<number>();
  for (const p of state.positions) {
    const moves = m.lexicon.next[p]!.get(c) ?? [];
    m.counter.steps += 1 + moves.length;
    for (const q of moves) targets.add(q);
  }
  const next = stateOf(m.lexicon, m.states, [...targets]);
  state.next.set(c, next);
  return next;
}

const isWordChar = (c: string) => (c >= "a" && c <= "z") || (c >= "0" && c <= "9");

/** Per entry with a match that starts at `from`, where its longest one ends. */
function longestEnds(m: Matching, text: string, from: number): Map<number, number> {
  const ends = new Map<number, number>();
  let state = m.start;
  for (let at = from; at < text.length && state.positions.length > 0; at++) {
    state = advance(m, state, text.charAt(at));
    if (state.accepts.length > 0 && !isWordChar(text.charAt(at + 1))) {
      for (const entry of state.accepts) ends.set(entry, at + 1);
    }
  }
  return ends;
}

/**
 * Where each entry's matches in a canonical text start: matches span whole words, the leftmost
 * first, at most {@link MAX_MATCHES}, none overlapping the one before (of the matches from one
 * start, the longest counts). A match is looked for once from each word's start and no pattern
 * spans more than a few words, so the work is linear in the text.
 */
export function matchStarts(
  lexicon: CompiledLexicon,
  text: string,
  counter: StepCounter = { steps: 0 },
): number[][] {
  const states = new Map<string, State>();
  const m: Matching = { lexicon, states, start: stateOf(lexicon, states, [0]), counter };
  const starts = lexicon.weights.map((): number[] => []);
  const free = lexicon.weights.map(() => 0); // where each entry's next match may start
  for (let at = 0; at < text.length; at++) {
    counter.steps++;
    if (at > 0 && isWordChar(text.charAt(at - 1))) continue;
    for (const [entry, end] of longestEnds(m, text, at)) {
      if (at < free[entry]! || starts[entry]!.length === MAX_MATCHES) continue;
      starts[entry]!.push(at);
      free[entry] = end;
    }
  }
  return starts;
}

/** Whether one of the three words before `index` negates what follows. */
function negated(text: string, index: number): boolean {
  const before = text.slice(Math.max(0, index - 64), index).split(" ").filter((w) => w !== "");
  return before.slice(-3).some((w) => NEGATORS.has(w));
}

/**
 * Scores a text in every category: weighted pattern matches on the canonical text (negated
 * matches count {@link NEGATED_WEIGHT}), summed per category and mapped to [0, 1) by 1 - e^(-s).
 * `counter`, if given, counts the matcher's steps.
 */
export function scoreText(
  lexicon: CompiledLexicon,
  text: string,
  counter?: StepCounter,
): CategoryScores {
  const canonical = canonicalText(text);
  const sums = zeroScores();
  matchStarts(lexicon, canonical, counter).forEach((starts, entry) => {
    starts.forEach((start, count) => {
      const factor = (negated(canonical, start) ? NEGATED_WEIGHT : 1) * 0.5 ** count;
      for (const [category, weight] of lexicon.weights[entry]!) sums[category] += weight * factor;
    });
  });
  const scores = zeroScores();
  for (const c of MODERATION_CATEGORIES) {
    scores[c] = sums[c] > 0 ? Math.round((1 - Math.exp(-sums[c])) * 1e6) / 1e6 : 0;
  }
  return liftParents(scores);
}

/** Characters scored between two turns of the event loop. */
const YIELD_CHARS = 64 * 1024;

/**
 * The simulator's moderation model: a deterministic lexicon classifier over each text and the
 * text embedded in its paired images (the simulator has no vision; see pairing.ts).
 */
export async function classify(
  lexicon: CompiledLexicon,
  req: ModerationRequest,
  ctx: CallContext,
): Promise<ModerationResult[]> {
  const results: ModerationResult[] = [];
  let sinceYield = 0;
  for (const pair of pairInputs(req.input, req.input_images)) {
    // Scoring takes ~0.1-0.5 µs a character: a full batch (20 MB) would hold the event loop
    // for seconds, so other requests get a turn after every ~64 K characters.
    if (sinceYield >= YIELD_CHARS) {
      sinceYield = 0;
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    stopIfAborted(ctx.signal);
    sinceYield += pair.text.length;
    const texts = [pair.text];
    for (const url of pair.images) {
      const base64 = url.slice(url.indexOf(",") + 1).replace(/\s+/g, "");
      texts.push(...embeddedText(Uint8Array.fromBase64(base64)));
    }
    results.push(finalizeResult({ category_scores: scoreText(lexicon, texts.join("\n")) }));
  }
  return results;
}
