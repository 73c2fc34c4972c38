import type { DocumentPart } from "../../canonical/conversation.ts";
import { pdfPages } from "../../canonical/prompt_tokens.ts";
import { decodedLength } from "../../http/image_data_url.ts";
import { clip, quote } from "../../quote.ts";

/** Characters of a document's URL or title the simulator repeats. */
const REPEATED_CHARS = 100;

/** What the simulator says about a message's documents: each one's title, kind and size (a
 * PDF's pages and bytes, a text's characters), one by URL that it was not fetched. `""` for
 * none. */
export function describeDocuments(documents: readonly DocumentPart[]): string {
  if (documents.length === 0) return "";
  const parts = documents.map((part, i) => `document ${i + 1} is ${documentSummary(part)}`);
  const s = documents.length === 1 ? "" : "s";
  return ` You sent ${documents.length} document${s}: ${parts.join("; ")}.`;
}

/** One document in a few words: `"q3.pdf", a PDF of 2 pages (1,234 bytes)`. */
export function documentSummary(part: DocumentPart): string {
  const title = part.title ? `${quote(clip(part.title, REPEATED_CHARS))}, ` : "";
  const { source } = part;
  switch (source.kind) {
    case "url":
      return `${title}a PDF at the URL ${
        clip(source.url, REPEATED_CHARS)
      }, which the simulator does not fetch`;
    case "text":
      return `${title}a text of ${source.text.length.toLocaleString("en-US")} characters`;
    case "data": {
      const pages = pdfPages(source.base64);
      const bytes = decodedLength(source.base64);
      return `${title}a PDF of ${pages} page${pages === 1 ? "" : "s"} (${
        bytes.toLocaleString("en-US")
      } bytes)`;
    }
  }
}
