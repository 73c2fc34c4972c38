/**
 * An OpenAI-style embeddings answer in base64 passed on without parsing its vectors: a scan of
 * its JSON text finds the `data` array (checking that it holds `expected` items, each with its
 * own `index` in order and a string `embedding`) and the usage, and the client's answer is
 * OpenAI's shape around the `data` text as the upstream wrote it, with the gateway's model id.
 * Anything else (floats, escapes in keys, items out of order, a shape it does not know) gives
 * `null`, and the answer is parsed instead.
 */

/** The client's answer, and the input tokens the upstream counted. */
export interface PassedEmbeddings {
  answer: string;
  promptTokens: number;
}

const WHITESPACE = /[ \t\r\n]/;

/** The answer for `text` with `model` as its model id, or `null` (see the module doc). */
export function passEmbeddingText(
  text: string,
  expected: number,
  model: string,
): PassedEmbeddings | null {
  const scan = new Scan(text);
  try {
    scan.space();
    scan.expect("{");
    let data: [number, number] | null = null;
    let promptTokens = 0;
    scan.space();
    if (scan.peek() === "}") return null;
    for (;;) {
      scan.space();
      const key = scan.key();
      scan.space();
      scan.expect(":");
      scan.space();
      if (key === "data") {
        const start = scan.at;
        if (scan.items(expected) !== expected) return null;
        data = [start, scan.at];
      } else if (key === "usage") {
        const start = scan.at;
        scan.value();
        const usage = JSON.parse(text.slice(start, scan.at));
        const prompt = usage?.prompt_tokens;
        if (typeof prompt === "number" && Number.isSafeInteger(prompt) && prompt >= 0) {
          promptTokens = prompt;
        }
      } else {
        scan.value();
      }
      scan.space();
      const next = scan.next();
      if (next === "}") break;
      if (next !== ",") return null;
    }
    scan.space();
    if (data === null || scan.at !== text.length) return null;
    const usage = `{"prompt_tokens":${promptTokens},"total_tokens":${promptTokens}}`;
    const answer = `{"object":"list","data":${text.slice(data[0], data[1])},"model":${
      JSON.stringify(model)
    },"usage":${usage}}`;
    return { answer, promptTokens };
  } catch (e) {
    if (e instanceof Unexpected) return null;
    throw e;
  }
}

/** The scan met what it does not pass on. */
class Unexpected extends Error {}

/** A position in the JSON text and the steps over it. */
class Scan {
  at = 0;
  constructor(readonly text: string) {}

  peek(): string {
    return this.text[this.at] ?? "";
  }

  next(): string {
    return this.text[this.at++] ?? "";
  }

  expect(char: string): void {
    if (this.next() !== char) throw new Unexpected();
  }

  space(): void {
    while (this.at < this.text.length && WHITESPACE.test(this.text[this.at]!)) this.at++;
  }

  /** A key without escapes. */
  key(): string {
    this.expect('"');
    const end = this.text.indexOf('"', this.at);
    if (end < 0) throw new Unexpected();
    const key = this.text.slice(this.at, end);
    if (key.includes("\\")) throw new Unexpected();
    this.at = end + 1;
    return key;
  }

  /** Past a string (at its opening quote); whether it held an escape. */
  string(): void {
    this.expect('"');
    for (;;) {
      const end = this.text.indexOf('"', this.at);
      if (end < 0) throw new Unexpected();
      let slashes = 0;
      while (this.text[end - 1 - slashes] === "\\") slashes++;
      this.at = end + 1;
      if (slashes % 2 === 0) return;
    }
  }

  /** Past any JSON value. */
  value(): void {
    const c = this.peek();
    if (c === '"') return this.string();
    if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]";
      this.at++;
      this.space();
      if (this.peek() === close) {
        this.at++;
        return;
      }
      for (;;) {
        this.space();
        if (c === "{") {
          this.string();
          this.space();
          this.expect(":");
          this.space();
        }
        this.value();
        this.space();
        const next = this.next();
        if (next === close) return;
        if (next !== ",") throw new Unexpected();
      }
    }
    const start = this.at;
    while (this.at < this.text.length && !/[,}\]\s]/.test(this.text[this.at]!)) this.at++;
    if (this.at === start) throw new Unexpected();
  }

  /** Past the `data` array: its items, each `{index, embedding: "<base64>", ...}` with its index
   * in order; the number of items. */
  items(expected: number): number {
    this.expect("[");
    this.space();
    let count = 0;
    if (this.peek() === "]") {
      this.at++;
      return 0;
    }
    for (;;) {
      this.space();
      this.item(count);
      count++;
      if (count > expected) throw new Unexpected();
      this.space();
      const next = this.next();
      if (next === "]") return count;
      if (next !== ",") throw new Unexpected();
    }
  }

  /** One item of `data`, which must be the `position`th. */
  item(position: number): void {
    this.expect("{");
    let index: number | null = null;
    let embedding = false;
    for (;;) {
      this.space();
      const key = this.key();
      this.space();
      this.expect(":");
      this.space();
      if (key === "embedding") {
        if (this.peek() !== '"') throw new Unexpected();
        this.string();
        embedding = true;
      } else if (key === "index") {
        const start = this.at;
        this.value();
        index = Number(this.text.slice(start, this.at));
      } else {
        this.value();
      }
      this.space();
      const next = this.next();
      if (next === "}") break;
      if (next !== ",") throw new Unexpected();
    }
    if (!embedding || (index !== null && index !== position)) throw new Unexpected();
  }
}
