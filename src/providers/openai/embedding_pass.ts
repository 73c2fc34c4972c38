/**
 * An OpenAI-style embeddings answer in base64 passed on without parsing or copying its vectors:
 * a scan of its JSON bytes finds the `data` array (checking that it holds `expected` items, each
 * with its own `index` in order and a string `embedding`) and the usage, and the client's answer
 * is OpenAI's shape around the `data` bytes as the upstream wrote them, with the gateway's model
 * id. Anything else (floats, escapes in keys, items out of order, a shape it does not know)
 * gives `null`, and the answer is parsed instead.
 */
import {
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  JsonScan,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  Unexpected,
} from "../../http/json_scan.ts";

/** The client's answer in parts (head, the upstream's `data` bytes, tail), and the input tokens
 * the upstream counted. */
export interface PassedEmbeddings {
  answer: Uint8Array[];
  promptTokens: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The answer for `bytes` with `model` as its model id, or `null` (see the module doc). */
export function passEmbeddings(
  bytes: Uint8Array,
  expected: number,
  model: string,
): PassedEmbeddings | null {
  const scan = new Scan(bytes);
  try {
    scan.space();
    scan.expect(OPEN_OBJECT);
    let data: [number, number] | null = null;
    let promptTokens = 0;
    scan.space();
    if (scan.peek() === CLOSE_OBJECT) return null;
    for (;;) {
      scan.space();
      const key = scan.keyOf(TOP_KEYS);
      scan.space();
      scan.expect(COLON);
      scan.space();
      if (key === 0) {
        const start = scan.at;
        if (scan.items(expected) !== expected) return null;
        data = [start, scan.at];
      } else if (key === 1) {
        const start = scan.at;
        scan.value();
        const usage = JSON.parse(decoder.decode(bytes.subarray(start, scan.at)));
        const prompt = usage?.prompt_tokens;
        if (typeof prompt === "number" && Number.isSafeInteger(prompt) && prompt >= 0) {
          promptTokens = prompt;
        }
      } else {
        scan.value();
      }
      scan.space();
      const next = scan.next();
      if (next === CLOSE_OBJECT) break;
      if (next !== COMMA) return null;
    }
    scan.space();
    if (data === null || scan.at !== bytes.length) return null;
    const tail = `,"model":${JSON.stringify(model)},"usage":{"prompt_tokens":${promptTokens},` +
      `"total_tokens":${promptTokens}}}`;
    return {
      answer: [
        encoder.encode('{"object":"list","data":'),
        bytes.subarray(data[0], data[1]),
        encoder.encode(tail),
      ],
      promptTokens,
    };
  } catch (e) {
    if (e instanceof Unexpected) return null;
    throw e;
  }
}

/** The keys the scan looks for, as bytes (compared in place: decoding each key was a tenth of
 * the scan). */
const DATA = encoder.encode("data");
const USAGE = encoder.encode("usage");
const EMBEDDING = encoder.encode("embedding");
const INDEX = encoder.encode("index");

/** The top-level keys read, and an item's, by position in these lists. */
const TOP_KEYS = [DATA, USAGE];
const ITEM_KEYS = [EMBEDDING, INDEX];

/** The scan of an embeddings answer: its `data` items. */
class Scan extends JsonScan {
  /** Past the `data` array: its items, each `{index, embedding: "<base64>", ...}` with its index
   * in order; the number of items. */
  items(expected: number): number {
    this.expect(OPEN_ARRAY);
    this.space();
    if (this.peek() === CLOSE_ARRAY) {
      this.at++;
      return 0;
    }
    let count = 0;
    for (;;) {
      this.space();
      this.item(count);
      count++;
      if (count > expected) throw new Unexpected();
      this.space();
      const next = this.next();
      if (next === CLOSE_ARRAY) return count;
      if (next !== COMMA) throw new Unexpected();
    }
  }

  /** One item of `data`, which must be the `position`th. */
  item(position: number): void {
    this.expect(OPEN_OBJECT);
    let index: number | null = null;
    let embedding = false;
    for (;;) {
      this.space();
      const key = this.keyOf(ITEM_KEYS);
      this.space();
      this.expect(COLON);
      this.space();
      if (key === 0) {
        if (this.peek() !== QUOTE) throw new Unexpected();
        this.string();
        embedding = true;
      } else if (key === 1) {
        index = this.digits();
      } else {
        this.value();
      }
      this.space();
      const next = this.next();
      if (next === CLOSE_OBJECT) break;
      if (next !== COMMA) throw new Unexpected();
    }
    if (!embedding || (index !== null && index !== position)) throw new Unexpected();
  }
}
