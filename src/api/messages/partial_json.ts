/**
 * A JSON object cut short, read as Anthropic's SDKs read the partial JSON of a streamed
 * `tool_use` block (the `input_json_delta`s so far): the value being written when the text ends
 * is left out, with its key, and the arrays and objects still open are closed. So an answer that
 * `max_tokens` ends inside a tool call's arguments has the same `input` streamed or not:
 * `{"city":"Par` reads as `{}`, `{"a":"x","b":[1,` as `{"a":"x","b":[1]}`.
 */
import { isObject } from "../../validation/reader.ts";

/** Literals, which a text may end in the middle of (`tru`). */
const LITERALS = ["true", "false", "null"] as const;
/** Characters that end a number or a literal. */
const DELIMITER = /[\s{}[\]:,"]/;

/** A token of the text: its kind (a punctuation character, or a scalar) and where it ends. */
interface Token {
  kind: "{" | "}" | "[" | "]" | ":" | "," | "string" | "scalar";
  end: number;
}

/** The object `text` holds once completed (see the module doc), or `undefined` when it is not
 * the start of a JSON object. */
export function parsePartialObject(text: string): Record<string, unknown> | undefined {
  const { tokens, open } = tokenize(text);
  const kept = complete(tokens, open.at(-1) === "}");
  const prefix = kept === 0 ? "" : text.slice(0, tokens[kept - 1]!.end);
  try {
    const value: unknown = JSON.parse(prefix + open.reverse().join(""));
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The tokens of `text` up to a value the end of the text cuts short (left out), and the
 * closers of the brackets left open. Anything that is not JSON stays in for `JSON.parse` to
 * refuse. */
function tokenize(text: string): { tokens: Token[]; open: string[] } {
  const tokens: Token[] = [];
  const open: string[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === "{" || c === "[") open.push(c === "{" ? "}" : "]");
    if (c === "}" || c === "]") open.pop();
    if ("{}[]:,".includes(c)) {
      tokens.push({ kind: c as Token["kind"], end: ++i });
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (j >= text.length) break; // a string cut short
      i = j + 1;
      tokens.push({ kind: "string", end: i });
    } else if (/\s/.test(c)) {
      i++;
    } else {
      let j = i;
      while (j < text.length && !DELIMITER.test(text[j]!)) j++;
      // At the end, a number may lack digits and a literal letters (`nu`): left out.
      if (j === text.length && cutShort(text.slice(i))) break;
      i = j;
      tokens.push({ kind: "scalar", end: i });
    }
  }
  return { tokens, open };
}

/** Whether a number or literal that ends the text may be cut short. */
function cutShort(word: string): boolean {
  return /^[-\d.]/.test(word) || LITERALS.some((l) => l !== word && l.startsWith(word));
}

/** How many tokens make a complete value once the open brackets are closed: a trailing `:` or
 * `,` is dropped, and so is a key without its value (a string after `{` or `,` in an object). */
function complete(tokens: readonly Token[], inObject: boolean): number {
  let n = tokens.length;
  while (n > 0) {
    const last = tokens[n - 1]!.kind;
    const before = tokens[n - 2]?.kind;
    if (last === ":") n--;
    else if (last === ",") return n - 1;
    else if (last === "string" && inObject && (before === "{" || before === ",")) n--;
    else break;
  }
  return n;
}
