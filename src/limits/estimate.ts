/**
 * The most tokens a request may use, for its token reservation (ledger.ts): its prompt,
 * over-estimated from the JSON body whatever its protocol, plus its maximum output.
 */

/** Characters per token of the prompt estimate: English text averages about four; three
 * over-counts it, as a reservation should. */
const CHARS_PER_TOKEN = 3;
/** What one image counts (a large image costs Anthropic ~1,600 tokens, OpenAI ~1,100). */
const IMAGE_TOKENS = 1600;
/** A string this long made only of base64 characters is image (or file) data. */
const DATA_MIN_CHARS = 256;
/** How much of a long string is looked at to tell data from text. */
const DATA_SAMPLE_CHARS = 1024;
const BASE64 = /^[A-Za-z0-9+/=_-]+$/;
/** The request fields that bound the output, by protocol (chat, Messages, Responses). */
const MAX_OUTPUT_FIELDS = ["max_completion_tokens", "max_tokens", "max_output_tokens"] as const;

/** The most tokens `body` may use: its prompt estimate, and its max output field (Gemini's
 * `generationConfig.maxOutputTokens`), else `defaultMaxTokens`. */
export function worstCaseTokens(
  body: Record<string, unknown>,
  defaultMaxTokens: number,
): { input: number; output: number } {
  const generation = body.generationConfig;
  let output = typeof generation === "object" && generation !== null
    ? maxTokens((generation as Record<string, unknown>).maxOutputTokens) ?? defaultMaxTokens
    : defaultMaxTokens;
  for (const field of MAX_OUTPUT_FIELDS) {
    const value = maxTokens(body[field]);
    if (value !== undefined) {
      output = value;
      break;
    }
  }
  return { input: promptEstimate(body), output };
}

/** A max output field's value, if it is one. */
function maxTokens(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** Tokens of every string in the body: text by its length, data (base64, data URLs) as an
 * image. */
export function promptEstimate(body: unknown): number {
  let chars = 0;
  let images = 0;
  const stack: unknown[] = [body];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === "string") {
      if (isData(value)) images++;
      else chars += value.length;
    } else if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
    } else if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) {
        chars += key.length;
        stack.push(item);
      }
    }
  }
  return Math.ceil(chars / CHARS_PER_TOKEN) + images * IMAGE_TOKENS;
}

/** Whether a string is data: a data URL, or base64 in its first {@link DATA_SAMPLE_CHARS}
 * (prose has spaces well before that; a regular expression over a 20 MB PDF took ~50 ms). */
function isData(text: string): boolean {
  if (text.length < DATA_MIN_CHARS) return false;
  return text.startsWith("data:") || BASE64.test(text.slice(0, DATA_SAMPLE_CHARS));
}
