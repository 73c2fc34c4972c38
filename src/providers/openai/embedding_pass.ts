/**
 * An OpenAI-style embeddings answer in base64 passed on without parsing or copying its vectors:
 * a scan of its JSON bytes finds the `data` array (checking that it holds `expected` items, each
 * with its own `index` in order and a string `embedding`) and the usage, and the client's answer
 * is OpenAI's shape around the `data` bytes as the upstream wrote them, with the gateway's model
 * id. Anything else (floats, escapes in keys, items out of order, a shape it does not know)
 * gives `null`, and the answer is parsed instead.
 */

/** The client's answer in parts (head, the upstream's `data` bytes, tail), and the input tokens
 * the upstream counted. */
export interface PassedEmbeddings {
  answer: Uint8Array[];
  promptTokens: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
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
      const key = scan.key();
      scan.space();
      scan.expect(COLON);
      scan.space();
      if (key === "data") {
        const start = scan.at;
        if (scan.items(expected) !== expected) return null;
        data = [start, scan.at];
      } else if (key === "usage") {
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

/** The scan met what it does not pass on. */
class Unexpected extends Error {}

/** A position in the JSON bytes and the steps over it. */
class Scan {
  at = 0;
  constructor(readonly bytes: Uint8Array) {}

  peek(): number {
    return this.bytes[this.at] ?? -1;
  }

  next(): number {
    return this.bytes[this.at++] ?? -1;
  }

  expect(byte: number): void {
    if (this.next() !== byte) throw new Unexpected();
  }

  space(): void {
    const bytes = this.bytes;
    for (;;) {
      const b = bytes[this.at];
      if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) return;
      this.at++;
    }
  }

  /** A key without escapes, as text. */
  key(): string {
    const start = this.at + 1;
    this.string();
    const raw = this.bytes.subarray(start, this.at - 1);
    if (raw.includes(BACKSLASH)) throw new Unexpected();
    return decoder.decode(raw);
  }

  /** Past a string (at its opening quote). */
  string(): void {
    this.expect(QUOTE);
    const bytes = this.bytes;
    for (;;) {
      const end = bytes.indexOf(QUOTE, this.at);
      if (end < 0) throw new Unexpected();
      let slashes = 0;
      while (bytes[end - 1 - slashes] === BACKSLASH) slashes++;
      this.at = end + 1;
      if (slashes % 2 === 0) return;
    }
  }

  /** Past any JSON value. */
  value(): void {
    const c = this.peek();
    if (c === QUOTE) return this.string();
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      const close = c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY;
      this.at++;
      this.space();
      if (this.peek() === close) {
        this.at++;
        return;
      }
      for (;;) {
        this.space();
        if (c === OPEN_OBJECT) {
          this.string();
          this.space();
          this.expect(COLON);
          this.space();
        }
        this.value();
        this.space();
        const next = this.next();
        if (next === close) return;
        if (next !== COMMA) throw new Unexpected();
      }
    }
    // A number or a literal: up to the next delimiter.
    const start = this.at;
    const bytes = this.bytes;
    for (; this.at < bytes.length; this.at++) {
      const b = bytes[this.at];
      if (
        b === COMMA || b === CLOSE_OBJECT || b === CLOSE_ARRAY || b === 0x20 || b === 0x0a ||
        b === 0x0d || b === 0x09
      ) break;
    }
    if (this.at === start) throw new Unexpected();
  }

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
      const key = this.key();
      this.space();
      this.expect(COLON);
      this.space();
      if (key === "embedding") {
        if (this.peek() !== QUOTE) throw new Unexpected();
        this.string();
        embedding = true;
      } else if (key === "index") {
        const start = this.at;
        this.value();
        index = Number(decoder.decode(this.bytes.subarray(start, this.at)));
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
