/**
 * The fake Anthropic upstream's prompt cache: the prefixes of requests up to each
 * `cache_control` breakpoint (tools → system → messages, the markers themselves not part of
 * the key), with their token counts. A later request whose prefix at a breakpoint was seen
 * reads the longest such prefix from the cache; the tokens from there to its last breakpoint
 * are written to it, as Anthropic reports them.
 */

type Obj = Record<string, unknown>;

/** The cache tokens of one request. */
export interface CacheUse {
  read: number;
  written: number;
  /** The ttl of the last breakpoint (the written tokens' lifetime). */
  ttl: "5m" | "1h";
}

/** Prefixes a fake has cached, for the life of the fake. */
export class FakePromptCache {
  readonly #seen = new Map<string, number>();
  readonly #minTokens: number;

  /** `minTokens`: prefixes shorter than this are not cached (Anthropic's minimum is 1024 to
   * 4096 tokens by model). */
  constructor(minTokens = 0) {
    this.#minTokens = minTokens;
  }

  /** What a (valid) request reads and writes, remembering its prefixes; `tokens` counts the
   * input tokens of a prefix (a request body cut at a breakpoint). */
  use(body: Obj, tokens: (prefix: Obj) => number): CacheUse {
    const points = breakpoints(body);
    let read = 0;
    for (const point of points) {
      const seen = this.#seen.get(point.key);
      if (seen !== undefined) read = Math.max(read, seen);
    }
    const last = points.at(-1);
    if (last === undefined) return { read: 0, written: 0, ttl: "5m" };
    let lastTokens = 0;
    for (const point of points) {
      const n = tokens(point.prefix);
      if (n >= this.#minTokens) this.#seen.set(point.key, n);
      lastTokens = n;
    }
    const written = lastTokens >= this.#minTokens ? Math.max(0, lastTokens - read) : 0;
    return { read, written, ttl: last.ttl === "1h" ? "1h" : "5m" };
  }
}

interface Breakpoint {
  /** The request cut just after the marked block. */
  prefix: Obj;
  key: string;
  ttl: unknown;
}

function marker(block: unknown): Obj | null {
  const control = (block as Obj | null)?.cache_control;
  return typeof control === "object" && control !== null ? control as Obj : null;
}

/** Every breakpoint of a request, in prefix order. */
function breakpoints(body: Obj): Breakpoint[] {
  const points: Breakpoint[] = [];
  const add = (prefix: Obj, control: Obj) =>
    points.push({
      prefix,
      key: JSON.stringify(prefix, (k, v) => k === "cache_control" ? undefined : v),
      ttl: control.ttl,
    });
  const tools = (body.tools ?? []) as unknown[];
  tools.forEach((tool, i) => {
    const control = marker(tool);
    if (control) add({ model: body.model, tools: tools.slice(0, i + 1), messages: [] }, control);
  });
  const system = Array.isArray(body.system) ? body.system : [];
  system.forEach((block, i) => {
    const control = marker(block);
    if (control) {
      add({ model: body.model, tools, system: system.slice(0, i + 1), messages: [] }, control);
    }
  });
  const messages = body.messages as Obj[];
  messages.forEach((message, m) => {
    if (!Array.isArray(message.content)) return;
    message.content.forEach((block, b) => {
      const control = marker(block);
      if (!control) return;
      add({
        model: body.model,
        tools,
        ...(body.system !== undefined ? { system: body.system } : {}),
        messages: [
          ...messages.slice(0, m),
          { role: message.role, content: (message.content as unknown[]).slice(0, b + 1) },
        ],
      }, control);
    });
  });
  return points;
}
