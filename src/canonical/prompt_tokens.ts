import type { CanonicalRequest, DocumentPart, Part } from "./conversation.ts";
import { countTokens } from "./tokens.ts";

/** Tokens a message costs beyond its parts, and a whole prompt beyond its messages (OpenAI's
 * accounting is similar). */
const MESSAGE_OVERHEAD = 4;
const PROMPT_OVERHEAD = 3;
/** What an image costs (OpenAI's low-detail price). */
const IMAGE_TOKENS = 85;
/** What a PDF page costs (Anthropic: 1,500 to 3,000 tokens a page, its text and its image). */
const PDF_PAGE_TOKENS = 1_500;
/** Bytes a PDF page is taken to hold when its page objects cannot be counted (compressed). */
const PDF_PAGE_BYTES = 50_000;
/** A page object (`/Type /Page`, not the `/Pages` tree) in a PDF read as Latin-1. */
const PDF_PAGE = /\/Type\s*\/Page(?![a-zA-Z])/g;

/** The input tokens of a request: the text of every message part and tool definition, images
 * at a fixed price, PDFs by their pages, plus fixed overheads. */
export function promptTokens(req: CanonicalRequest): number {
  let n = PROMPT_OVERHEAD;
  for (const m of req.messages) {
    n += MESSAGE_OVERHEAD;
    for (const part of m.parts) n += partTokens(part);
  }
  if (req.options.tools.length > 0) n += countTokens(JSON.stringify(req.options.tools));
  return n;
}

function partTokens(part: Part): number {
  switch (part.type) {
    case "text":
    case "reasoning":
    case "refusal":
      return countTokens(part.text);
    case "image":
      return IMAGE_TOKENS;
    case "document":
      return documentTokens(part);
    case "tool_call":
      return 1 + countTokens(part.arguments);
    case "tool_result": {
      let n = 0;
      for (const inner of part.content) n += partTokens(inner);
      return n;
    }
  }
}

/** A document's text, or its PDF's pages at {@link PDF_PAGE_TOKENS} each (a PDF by URL is
 * counted as one page: its size is not known). */
function documentTokens(part: DocumentPart): number {
  const title = part.title === undefined ? 0 : countTokens(part.title);
  const { source } = part;
  if (source.kind === "text") return title + countTokens(source.text);
  if (source.kind === "url") return title + PDF_PAGE_TOKENS;
  return title + PDF_PAGE_TOKENS * pdfPages(source.base64);
}

/** The pages of a base64 PDF: its page objects, else one per {@link PDF_PAGE_BYTES}. */
export function pdfPages(base64: string): number {
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.fromBase64(base64);
  } catch {
    return 1;
  }
  // Latin-1 keeps one character per byte; page objects are plain ASCII unless compressed.
  const text = new TextDecoder("latin1").decode(bytes);
  const objects = text.match(PDF_PAGE)?.length ?? 0;
  return Math.max(1, objects > 0 ? objects : Math.ceil(bytes.length / PDF_PAGE_BYTES));
}
