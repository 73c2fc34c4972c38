/**
 * The "model" behind the fake upstreams: both fakes turn what they receive into one
 * provider-neutral {@link Conversation}, ask a {@link Script} for a reply, and render the
 * {@link Generation} in their own wire format. Same conversation, same reply, same token
 * counts: so the gateway's answers from the two fakes can be compared field by field.
 */

/** An image as received, after the fake decoded it. */
export interface ReceivedImage {
  mediaType: string;
  bytes: number;
}

export interface Turn {
  role: "user" | "assistant";
  texts: string[];
  images: ReceivedImage[];
  toolCalls: { id: string; name: string; arguments: Record<string, unknown> }[];
  toolResults: { id: string; text: string }[];
}

/** What the model was asked, in neither provider's shape. */
export interface Conversation {
  model: string;
  system: string[];
  turns: Turn[];
  tools: { name: string; description: string | null; parameters: Record<string, unknown> }[];
  /** `auto` when the request said nothing. */
  toolChoice: "auto" | "none" | "required" | { name: string };
  maxTokens: number;
  stop: string[];
  /** In the provider's own range; `null` when not sent. */
  temperature: number | null;
}

/** What the model "decides" to answer, before stop sequences and max_tokens apply. */
export interface Reply {
  text: string;
  toolCalls: { name: string; arguments: Record<string, unknown> }[];
}

export type Script = (conversation: Conversation) => Reply;

/** The rendered-independent result of one call. */
export interface Generation {
  /** Text pieces (one per token), after cutting at a stop sequence or max_tokens. */
  pieces: string[];
  toolCalls: { id: string; name: string; arguments: string }[];
  finish: "stop" | "stop_sequence" | "length" | "tool_calls";
  /** The stop sequence that ended the text, if one did. */
  stopSequence: string | null;
  promptTokens: number;
  completionTokens: number;
}

/** Splits text into "tokens": each word with the whitespace after it. */
export function tokenize(text: string): string[] {
  return text.match(/\s*\S+\s*/gu) ?? (text === "" ? [] : [text]);
}

function words(text: string): number {
  return text.split(/\s+/u).filter((w) => w !== "").length;
}

/** Counts prompt tokens the same way whatever the wire format was. */
export function promptTokens(c: Conversation): number {
  let n = 0;
  for (const s of c.system) n += words(s);
  for (const turn of c.turns) {
    for (const t of turn.texts) n += words(t);
    for (const r of turn.toolResults) n += words(r.text);
    n += turn.toolCalls.length * 3 + turn.images.length * 85;
  }
  return n;
}

/**
 * The default script, deciding like the simulator: with tools (unless `none`) and a user turn
 * last, it calls the named tool, or the tools whose names appear in the last user text (the
 * first tool when `required` and none appears), each once, or once per city when the tool
 * has a `city` property and the text names cities (capitalised words after the first);
 * other string properties get "x". After tool results it reports them; otherwise it answers
 * `You said: <last user text>` and describes any images.
 */
export const defaultScript: Script = (c) => {
  const last = c.turns.at(-1);
  const userText = last?.texts.join(" ") ?? "";
  if (last?.toolResults.length) {
    return {
      text: `Tool results: ${last.toolResults.map((r) => r.text).join("; ")}`,
      toolCalls: [],
    };
  }
  const calls: Reply["toolCalls"] = [];
  const cities = userText.match(/\p{Lu}\p{Ll}+/gu)?.slice(1) ?? [];
  for (const tool of chosenTools(c, userText)) {
    const props = Object.keys((tool.parameters.properties ?? {}) as Record<string, unknown>);
    if (props.includes("city") && cities.length > 0) {
      for (const city of cities) calls.push({ name: tool.name, arguments: { city } });
    } else {
      calls.push({ name: tool.name, arguments: Object.fromEntries(props.map((p) => [p, "x"])) });
    }
  }
  if (calls.length > 0) return { text: "", toolCalls: calls };
  const images = last?.images ?? [];
  const seen = images.map((i) => ` I see an ${i.mediaType} image of ${i.bytes} bytes.`).join("");
  return { text: `You said: ${userText}${seen}`, toolCalls: [] };
};

function chosenTools(c: Conversation, userText: string): Conversation["tools"] {
  const choice = c.toolChoice;
  if (c.tools.length === 0 || choice === "none") return [];
  if (typeof choice === "object") return c.tools.filter((t) => t.name === choice.name);
  const named = c.tools
    .map((tool) => ({ tool, at: userText.search(new RegExp(`(?<![\\w-])${tool.name}(?![\\w-])`)) }))
    .filter((n) => n.at >= 0)
    .sort((a, b) => a.at - b.at)
    .map((n) => n.tool);
  return named.length === 0 && choice === "required" ? c.tools.slice(0, 1) : named;
}

/** Applies stop sequences and max_tokens to a reply and counts tokens. */
export function generate(c: Conversation, reply: Reply, callIds: () => string): Generation {
  let text = reply.text;
  let finish: Generation["finish"] = reply.toolCalls.length > 0 ? "tool_calls" : "stop";
  let stopSequence: string | null = null;
  let cut = -1;
  for (const s of c.stop) {
    const at = text.indexOf(s);
    if (at >= 0 && (cut < 0 || at < cut)) {
      cut = at;
      stopSequence = s;
    }
  }
  if (cut >= 0) {
    text = text.slice(0, cut);
    finish = "stop_sequence";
  }
  let pieces = tokenize(text);
  let toolCalls = reply.toolCalls.map((call) => ({
    id: callIds(),
    name: call.name,
    arguments: JSON.stringify(call.arguments),
  }));
  const toolTokens = toolCalls.reduce((n, t) => n + Math.ceil(t.arguments.length / 4) + 1, 0);
  if (pieces.length + toolTokens > c.maxTokens) {
    pieces = pieces.slice(0, c.maxTokens);
    toolCalls = [];
    finish = "length";
    stopSequence = null;
  }
  return {
    pieces,
    toolCalls,
    finish,
    stopSequence,
    promptTokens: promptTokens(c),
    completionTokens: pieces.length + (toolCalls.length > 0 ? toolTokens : 0),
  };
}

/** Splits a string into fragments of about `size` characters (argument streaming). */
export function fragments(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The kind of image the bytes hold, by magic number, or `null`. */
export function sniffImage(bytes: Uint8Array): string | null {
  if (bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47) {
    return "image/png";
  }
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
  if (bytes[0] === 0x47 && bytes[1] === 0x49 && bytes[2] === 0x46) return "image/gif";
  if (bytes[0] === 0x52 && bytes[1] === 0x49 && bytes[2] === 0x46 && bytes[8] === 0x57) {
    return "image/webp";
  }
  return null;
}
