/**
 * The Responses API's tools under the canonical model's one kind of tool (a function with a
 * name of at most 64 letters, digits, `_` or `-`, which every provider takes): a `function`
 * keeps its name; a `custom` (free-form) tool keeps its name and becomes a function of one
 * string argument, `input`; a tool inside a `namespace` becomes `namespace__name` (or, when
 * that is too long or taken, a shortened form with a hash of both). The map goes both ways, so
 * that a call the model makes comes back as the item the client declared (`function_call` with
 * its `namespace`, or `custom_tool_call`), and a call item sent back becomes the same canonical
 * call.
 */

/** A tool as the client declared it. */
export interface WireTool {
  kind: "function" | "custom";
  name: string;
  /** The `namespace` tool holding it, if any. */
  namespace?: string;
}

/** What separates a namespace from its tool's name in a flattened name. */
const SEPARATOR = "__";
/** The longest name providers take (OpenAI's and Anthropic's limit). */
const MAX_NAME = 64;

/** The canonical argument of a custom tool: the free-form text the model writes. */
export const CUSTOM_INPUT = "input";

/** The canonical parameters of a custom tool. */
export function customParameters(description: string): Record<string, unknown> {
  return {
    type: "object",
    properties: { [CUSTOM_INPUT]: { type: "string", description } },
    required: [CUSTOM_INPUT],
    additionalProperties: false,
  };
}

/** The canonical arguments (JSON) of a custom tool call whose input is `input`. */
export function customArguments(input: string): string {
  return JSON.stringify({ [CUSTOM_INPUT]: input });
}

/** The input of a custom tool call from its canonical arguments: the `input` string, else (a
 * model that wrote something else) the arguments as written. */
export function customInput(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
      const input = (parsed as Record<string, unknown>)[CUSTOM_INPUT];
      if (typeof input === "string") return input;
    }
  } catch {
    // not JSON: the text is the input
  }
  return args;
}

/** The two-way map of one request's tools (see the module doc). */
export class ToolMap {
  /** By canonical name. */
  readonly #tools = new Map<string, WireTool>();
  /** Canonical names by the wire identity (namespace and name). */
  readonly #names = new Map<string, string>();

  /**
   * Adds a tool and returns its canonical name. Tools outside namespaces must be added first
   * (their names are their own and come first); a namespaced tool takes `namespace__name`, or
   * a shortened name with a hash when that is too long or already taken.
   */
  add(tool: WireTool): string {
    const name = tool.namespace === undefined
      ? tool.name
      : freeName(flatName(tool.namespace, tool.name), tool, (n) => this.#tools.has(n));
    this.#tools.set(name, tool);
    this.#names.set(wireKey(tool.namespace, tool.name), name);
    return name;
  }

  /** The canonical name of a tool a call item names (as declared; for a tool this request does
   * not declare, the name it would have had alone). */
  canonical(name: string, namespace?: string): string {
    const known = this.#names.get(wireKey(namespace, name));
    if (known !== undefined) return known;
    if (namespace === undefined) return name;
    return freeName(flatName(namespace, name), { kind: "function", name, namespace }, () => false);
  }

  /** The tool a canonical name stands for (a plain function for a name this map lacks). */
  wire(name: string): WireTool {
    return this.#tools.get(name) ?? { kind: "function", name };
  }
}

function wireKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ""}\u0000${name}`;
}

function flatName(namespace: string, name: string): string {
  return `${namespace}${SEPARATOR}${name}`;
}

/** `flat` when it fits and is free; else its start with a hash of the tool, and a counter when
 * even that is taken. */
function freeName(flat: string, tool: WireTool, taken: (name: string) => boolean): string {
  if (flat.length <= MAX_NAME && !taken(flat)) return flat;
  const hash = hex8(`${tool.namespace ?? ""}\u0000${tool.name}`);
  const short = `${flat.slice(0, MAX_NAME - hash.length - 1)}_${hash}`;
  if (!taken(short)) return short;
  for (let i = 2;; i++) {
    const suffix = `_${hash.slice(0, 6)}${i}`;
    const numbered = `${flat.slice(0, MAX_NAME - suffix.length)}${suffix}`;
    if (!taken(numbered)) return numbered;
  }
}

/** FNV-1a of the text as 8 hex digits. */
function hex8(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}
