/**
 * A batch input file checked line by line (OpenAI's batch format): each non-blank line a JSON
 * object `{custom_id, method: "POST", url, body}`, `url` one of the endpoints batches run,
 * `custom_id` unique in the file. Every bad line is reported with its line number.
 */
import { quote } from "../quote.ts";
import { invalidValue, ValidationError } from "../validation/error.ts";
import { readJson } from "../validation/reader.ts";

/** The endpoints a batch line may call. */
export const BATCH_ENDPOINTS = [
  "/v1/chat/completions",
  "/v1/embeddings",
  "/v1/responses",
  "/v1/moderations",
] as const;
export type BatchEndpoint = typeof BATCH_ENDPOINTS[number];

/** Where a good line is in the file. */
export interface LineSpan {
  /** Byte offset of the line's JSON in the file. */
  offset: number;
  /** Its length in bytes (without the line break). */
  length: number;
}

/** One bad line: its number (from 1) and what is wrong. */
export interface LineError {
  line: number;
  message: string;
}

/** The lines of a file, or what is wrong with them. */
export interface CheckedFile {
  spans: LineSpan[];
  errors: LineError[];
}

/** The most errors reported for one file (the count of the rest is given). */
export const MAX_REPORTED = 20;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Checks every line of `bytes` (at most `maxLines` non-blank ones). */
export function checkBatchFile(bytes: Uint8Array, maxLines: number): CheckedFile {
  const spans: LineSpan[] = [];
  const errors: LineError[] = [];
  const seen = new Set<string>();
  let start = 0;
  let number = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end === -1) end = bytes.length;
    number++;
    let stop = end;
    if (stop > start && bytes[stop - 1] === 0x0d) stop--;
    const span = { offset: start, length: stop - start };
    start = end + 1;
    let text: string;
    try {
      text = utf8.decode(bytes.subarray(span.offset, span.offset + span.length));
    } catch {
      errors.push({ line: number, message: "the line is not valid UTF-8" });
      continue;
    }
    if (text.trim() === "") continue;
    if (spans.length + errors.length >= maxLines) {
      errors.push({ line: number, message: `the file has more than ${maxLines} lines` });
      break;
    }
    const message = checkLine(text, seen);
    if (message === null) spans.push(span);
    else errors.push({ line: number, message });
  }
  if (spans.length === 0 && errors.length === 0) {
    errors.push({ line: 1, message: "the file has no lines" });
  }
  return { spans, errors };
}

/** What is wrong with one line, or `null`; its `custom_id` joins `seen`. */
function checkLine(text: string, seen: Set<string>): string | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return `not valid JSON (${(e as Error).message.slice(0, 100)})`;
  }
  try {
    const f = readJson(value).object();
    const customId = f.string("custom_id", { nonEmpty: true, maxLength: 512 });
    f.oneOf("method", ["POST"] as const);
    f.oneOf("url", BATCH_ENDPOINTS);
    const body = f.get("body");
    const fields = body.object();
    if (fields.boolean("stream", { optional: true, nullable: true }) === true) {
      throw invalidValue("body.stream", "a batch line cannot stream");
    }
    f.done();
    if (seen.has(customId)) return `custom_id ${quote(customId)} is used by an earlier line`;
    seen.add(customId);
    return null;
  } catch (e) {
    if (e instanceof ValidationError) return e.fieldMessage();
    throw e;
  }
}

/** The parsed line at a span (checked when the file was uploaded). */
export interface BatchLine {
  custom_id: string;
  url: BatchEndpoint;
  body: Record<string, unknown>;
}

/** Reads a line checked by {@link checkBatchFile}. */
export function parseLine(bytes: Uint8Array): BatchLine {
  const value = JSON.parse(utf8.decode(bytes)) as BatchLine;
  return { custom_id: value.custom_id, url: value.url, body: value.body };
}
