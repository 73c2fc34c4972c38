/**
 * The guardrails that check text by patterns (`pii`, `deny`): what they find applied to a
 * text (a block throws, a redaction puts a placeholder in, a log only records), whole or as it
 * streams in windows.
 */
import type { GuardrailConfig, PiiKind } from "../config/types.ts";
import { DENIED, denyFinder } from "./deny.ts";
import { guardrailBlocked } from "./errors.ts";
import { type Finding, findPii, PLACEHOLDER_TYPES, withoutOverlaps } from "./pii.ts";
import type { GuardrailReport } from "./report.ts";
import type { Vault } from "./vault.ts";

/** A pattern guardrail, ready to run. */
export interface TextCheck {
  guardrail: GuardrailConfig;
  find(text: string): Finding[];
}

/** A finding and the check that found it. */
interface Hit extends Finding {
  check: TextCheck;
}

/** What the checks of one request record into and take placeholders from. */
export interface CheckState {
  report: GuardrailReport;
  vault: Vault;
}

/** The check of a `pii` or `deny` guardrail (`null` for other types). */
export function textCheck(guardrail: GuardrailConfig): TextCheck | null {
  if (guardrail.type === "pii") {
    const kinds = new Set<PiiKind>(
      guardrail.entities ?? Object.keys(PLACEHOLDER_TYPES) as PiiKind[],
    );
    return { guardrail, find: (text) => findPii(text, kinds) };
  }
  if (guardrail.type === "deny") {
    return { guardrail, find: denyFinder(guardrail.words ?? [], guardrail.patterns ?? []) };
  }
  return null;
}

/** What `checks` find in `text`, read after `before` (the text just before it, already sent:
 * what a finding may not follow, as a word's letters), at their places in `text`. A finding
 * within `before` is left out; one that began there is cut to where `text` begins. */
function scan(text: string, checks: readonly TextCheck[], before = ""): Hit[] {
  const hits: Hit[] = [];
  const shift = before.length;
  const whole = shift === 0 ? text : before + text;
  for (const check of checks) {
    for (const found of check.find(whole)) {
      if (found.end <= shift) continue;
      hits.push({
        ...found,
        start: Math.max(0, found.start - shift),
        end: found.end - shift,
        check,
      });
    }
  }
  return hits;
}

/** `text` with `hits` applied: a blocking one throws `guardrail_blocked`, redacting ones are
 * replaced by placeholders, the others recorded. */
function applyHits(text: string, hits: readonly Hit[], state: CheckState): string {
  if (hits.length === 0) return text;
  for (const hit of hits) {
    const guardrail = hit.check.guardrail;
    if (guardrail.action === "block") {
      state.report.record(guardrail, "blocked", hit.kind);
      throw guardrailBlocked(guardrail, hit.kind);
    }
    if (guardrail.action === "log") state.report.record(guardrail, "logged", hit.kind);
  }
  const redactions = withoutOverlaps(hits.filter((h) => h.check.guardrail.action === "redact"));
  let out = "";
  let at = 0;
  for (const hit of redactions) {
    const guardrail = hit.check.guardrail;
    const type = hit.kind === DENIED ? "DENIED" : PLACEHOLDER_TYPES[hit.kind as PiiKind];
    const value = text.slice(hit.start, hit.end);
    out += text.slice(at, hit.start) +
      state.vault.placeholder(type, value, guardrail.restore ?? false);
    at = hit.end;
    state.report.record(guardrail, "redacted", hit.kind);
  }
  return out + text.slice(at);
}

/** `text` after `checks` (see {@link applyHits}); `before`: see {@link scan}. */
export function checkText(
  text: string,
  checks: readonly TextCheck[],
  state: CheckState,
  before = "",
): string {
  if (checks.length === 0 || text === "") return text;
  return applyHits(text, scan(text, checks, before), state);
}

/** Characters a streamed block holds back by default: what a finding may span before it is
 * recognised (an e-mail address's local part and domain, an IBAN, a key's prefix). */
export const STREAM_HOLD = 96;

/** Characters of the text already sent that a window is read after: what the checks look back
 * at before a finding (the one character a word or a value may not follow, a surrogate pair). */
const SENT_CONTEXT = 8;

/**
 * The checks of one streamed block (its text or tool-call arguments): deltas are gathered
 * into windows of at least twice the hold, each scanned with the held tail before it, and all
 * but the tail sent, so that a finding split across deltas is caught; a finding across the
 * window's end is held back whole. Each window is read after the end of what was sent, so that
 * its start is no word's start when a word runs on across it. Memory is the window.
 */
export class WindowFilter {
  #text = "";
  /** The end of what was sent (as written, before any placeholder): see {@link scan}. */
  #sent = "";

  constructor(
    readonly checks: readonly TextCheck[],
    readonly state: CheckState,
    readonly hold = STREAM_HOLD,
  ) {}

  /** The text to send after `delta` (often empty: held for the window). */
  push(delta: string): string {
    const text = this.#text + delta;
    if (text.length < 2 * this.hold) {
      this.#text = text;
      return "";
    }
    const hits = scan(text, this.checks, this.#sent);
    let cut = text.length - this.hold;
    // A finding across the cut is held back whole (and so is any that the new cut crosses).
    for (let moved = true; moved;) {
      moved = false;
      for (const hit of hits) {
        if (hit.start < cut && hit.end > cut) {
          cut = hit.start;
          moved = true;
        }
      }
    }
    this.#text = text.slice(cut);
    if (cut > 0) {
      this.#sent = (this.#sent + text.slice(Math.max(0, cut - SENT_CONTEXT), cut)).slice(
        -SENT_CONTEXT,
      );
    }
    return applyHits(text.slice(0, cut), hits.filter((h) => h.end <= cut), this.state);
  }

  /** The text held back, checked, at the block's end. */
  end(): string {
    const text = this.#text;
    this.#text = "";
    return checkText(text, this.checks, this.state, this.#sent);
  }
}
