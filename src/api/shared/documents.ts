/**
 * Document sources as the front doors read them: base64 PDF bytes, base64 UTF-8 text, a
 * document data URL (`data:application/pdf;base64,...`, OpenAI's `file_data`) and an https://
 * URL, each checked where it is sent, so that a 400 names the field at fault.
 */
import type { DocumentPart } from "../../canonical/conversation.ts";
import { quote } from "../../quote.ts";
import { pdfPageCount } from "../../canonical/prompt_tokens.ts";
import type { Reader } from "../../validation/reader.ts";

/** Where a document's content is. */
export type DocumentSource = DocumentPart["source"];

/** The media type of a PDF document. */
export const PDF = "application/pdf";
/** The media type of a text document. */
export const TEXT = "text/plain";

/** A media type is at most 64 characters a side, so that an error can quote it (as images'). */
const DATA_URL = /^data:([a-z0-9.+-]{1,64}\/[a-z0-9.+-]{1,64})(?:;[a-z0-9-]+=[^;,]*)*;base64,/i;
const HTTPS = /^https:\/\//i;
const PLAIN_HTTP = /^http:/i;
/** The bytes a PDF starts with. */
const PDF_MAGIC = "%PDF-";
const DATA_URL_FORM =
  "a base64 data URL of a PDF (data:application/pdf;base64,...) or of text (data:text/plain;base64,...)";

/**
 * A document data URL in `field` as the source it holds: a PDF (`application/pdf`, checked as
 * {@link pdfSource}) or text (`text/plain`, decoded as UTF-8). A 400 naming `field` otherwise.
 */
export function dataUrlSource(field: Reader): DocumentSource {
  const url = field.string({ expected: `a string (${DATA_URL_FORM})` });
  const match = DATA_URL.exec(url);
  if (!match) {
    const got = HTTPS.test(url) || PLAIN_HTTP.test(url) ? "a URL" : quote(url);
    throw field.invalid(`expected ${DATA_URL_FORM}, but got ${got}`);
  }
  const mediaType = match[1]!.toLowerCase();
  const base64 = url.slice(match[0].length);
  if (mediaType === PDF) return pdfSource(base64, field);
  if (mediaType === TEXT) return textSource(base64, field);
  throw field.invalid(
    `expected a PDF (${PDF}) or text (${TEXT}) document, but got ${quote(mediaType)}`,
  );
}

/** Base64 PDF bytes as a data source, with their pages counted: valid base64 (whitespace
 * aside) of bytes that start as a PDF's do. A 400 naming `field` otherwise. */
export function pdfSource(base64: string, field: Reader): DocumentSource {
  const data = decodedBase64(base64, field);
  const head = new TextDecoder().decode(data.bytes.subarray(0, PDF_MAGIC.length));
  if (head !== PDF_MAGIC) {
    throw field.invalid(
      `expected a PDF document, but its bytes do not start with ${PDF_MAGIC} as a PDF's do`,
    );
  }
  return {
    kind: "data",
    mediaType: PDF,
    base64: data.base64,
    pages: pdfPageCount(data.bytes),
  };
}

/** Base64 UTF-8 text as a text source. A 400 naming `field` when it is not. */
export function textSource(base64: string, field: Reader): DocumentSource {
  const { bytes } = decodedBase64(base64, field);
  try {
    return { kind: "text", text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch {
    throw field.invalid("expected the base64 of UTF-8 text, but it decodes to other bytes");
  }
}

/** An https:// URL in `field` as a url source (the gateway never fetches it). A 400 naming
 * `field` for a plain http:// URL or anything else. */
export function urlSource(field: Reader): DocumentSource {
  const url = field.string({ expected: "a string (an https:// URL)" });
  if (PLAIN_HTTP.test(url)) {
    throw field.invalid("expected an https:// URL, but got a plain http:// URL");
  }
  if (!HTTPS.test(url) || !URL.canParse(url)) {
    throw field.invalid(`expected an https:// URL, but got ${quote(url)}`);
  }
  return { kind: "url", url };
}

/** The bytes of `base64` (ASCII whitespace allowed, as the decoder skips it) and the base64 to
 * pass on (padded, without whitespace); a 400 naming `field` when it is empty or not base64. One
 * native decode checks it (15 MB: ~20 ms, against ~70 ms for a whitespace pass and a regular
 * expression over the text). */
function decodedBase64(
  base64: string,
  field: Reader,
): { bytes: Uint8Array<ArrayBuffer>; base64: string } {
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = Uint8Array.fromBase64(base64);
  } catch {
    throw field.invalid("expected base64 data, but it is not valid base64");
  }
  if (bytes.length === 0) throw field.invalid("expected base64 data, but got an empty string");
  const plain = base64.length === Math.ceil(bytes.length / 3) * 4 ? base64 : bytes.toBase64();
  return { bytes, base64: plain };
}
