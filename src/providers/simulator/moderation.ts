import { MODERATION_CATEGORIES, type ModerationCategory } from "../../config.ts";
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

/** A lexicon entry compiled to a global regular expression over canonical text. */
interface CompiledEntry {
  re: RegExp;
  weights: [ModerationCategory, number][];
}

/** The regular expression for one word: each letter may repeat; `*` allows any ending. */
function wordSource(word: string): string {
  if (word.startsWith("@")) {
    const group = GROUPS[word.slice(1)];
    if (!group) throw new Error(`unknown lexicon group ${word}`);
    return `(?:${group.map(phraseSource).join("|")})`;
  }
  const m = /^([a-z0-9]+)(\*?)$/.exec(word);
  if (!m) throw new Error(`invalid lexicon word ${JSON.stringify(word)}`);
  const letters = m[1]!.replace(/[a-z]/g, "$&+");
  return m[2] ? `${letters}[a-z0-9]*` : letters;
}

const phraseSource = (phrase: string) => phrase.split(" ").map(wordSource).join(" ?");

/** Compiles a lexicon pattern (syntax in moderation_lexicon.ts). */
export function compilePattern(pattern: string): RegExp {
  let source = "";
  pattern.split(" + ").forEach((rawSlot, i) => {
    const slot = rawSlot.trim();
    if (slot === "~") {
      source += "(?: [a-z0-9]+){0,3}";
      return;
    }
    const optional = slot.endsWith("?");
    const alternatives = (optional ? slot.slice(0, -1) : slot).split("|").map(phraseSource);
    const body = `(?:${alternatives.join("|")})`;
    const sep = i === 0 ? "" : " ?";
    source += optional ? `(?:${sep}${body})?` : `${sep}${body}`;
  });
  return new RegExp(`(?<![a-z0-9])${source}(?![a-z0-9])`, "g");
}

function compile(entry: LexiconEntry): CompiledEntry {
  return {
    re: compilePattern(entry.pattern),
    weights: Object.entries(entry.weights) as [ModerationCategory, number][],
  };
}

const COMPILED: readonly CompiledEntry[] = LEXICON.map(compile);

/** How many matches of one pattern count (each counting half the one before). */
const MAX_MATCHES = 3;

/** Whether one of the three words before `index` negates what follows. */
function negated(text: string, index: number): boolean {
  const before = text.slice(Math.max(0, index - 64), index).split(" ").filter((w) => w !== "");
  return before.slice(-3).some((w) => NEGATORS.has(w));
}

/**
 * Scores a text in every category: weighted pattern matches on the canonical text (negated
 * matches count {@link NEGATED_WEIGHT}), summed per category and mapped to [0, 1) by 1 − e^(−s).
 */
export function scoreText(text: string): CategoryScores {
  const canonical = canonicalText(text);
  const sums = zeroScores();
  for (const entry of COMPILED) {
    let count = 0;
    for (const match of canonical.matchAll(entry.re)) {
      const factor = (negated(canonical, match.index) ? NEGATED_WEIGHT : 1) * 0.5 ** count;
      for (const [category, weight] of entry.weights) sums[category] += weight * factor;
      if (++count === MAX_MATCHES) break;
    }
  }
  const scores = zeroScores();
  for (const c of MODERATION_CATEGORIES) {
    scores[c] = sums[c] > 0 ? Math.round((1 - Math.exp(-sums[c])) * 1e6) / 1e6 : 0;
  }
  return liftParents(scores);
}

/**
 * The simulator's moderation model: a deterministic lexicon classifier over each text and the
 * text embedded in its paired images (the simulator has no vision; see pairing.ts).
 */
export async function classify(
  req: ModerationRequest,
  ctx: CallContext,
): Promise<ModerationResult[]> {
  const results: ModerationResult[] = [];
  for (const pair of pairInputs(req.input, req.input_images)) {
    stopIfAborted(ctx.signal);
    const texts = [pair.text];
    for (const url of pair.images) {
      const base64 = url.slice(url.indexOf(",") + 1).replace(/\s+/g, "");
      texts.push(...await embeddedText(Uint8Array.fromBase64(base64)));
    }
    results.push(finalizeResult({ category_scores: scoreText(texts.join("\n")) }));
  }
  return results;
}
