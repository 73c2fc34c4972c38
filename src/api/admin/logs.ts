import type { RequestContext } from "../../pipeline/context.ts";
import { json } from "../../http/response.ts";
import { LOG_PREFIX, logBucket, logRows } from "../../log/kv_sink.ts";
import type { LogRecord } from "../../log/record.ts";
import { readTime } from "./input.ts";
import { followLogs } from "./logs_follow.ts";
import { quote } from "../../quote.ts";
import { invalidValue } from "../../validation/error.ts";
import { OPTIONAL } from "../../validation/reader.ts";
import { pageLimit, queryFields } from "../../validation/query.ts";

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

/**
 * `GET /admin/logs`: request records kept in KV, newest first. Filters: `since` (inclusive)
 * and `until` (exclusive), each an ISO 8601 time or Unix ms; `status` (`429`, or a class
 * like `4xx`); `model`; `key_id` (`anonymous` for requests without a key); `path`; `limit`
 * (1-1000, default 100). When the page is full, `next_cursor` names its last record: pass it
 * as `cursor` (with the same filters) for the records after it (records logged meanwhile do not
 * shift the pages). With `follow=1` (or `true`), new records as server-sent events instead (see
 * `logs_follow.ts`), with the same filters but no `since`, `until`, `limit` or `cursor`.
 */
export async function listLogs(ctx: RequestContext): Promise<Response> {
  const q = queryFields(ctx.url.searchParams);
  const since = readTime(q, "since");
  const until = readTime(q, "until");
  const status = q.string("status", OPTIONAL);
  const matchStatus = status === undefined ? null : statusMatcher(status);
  const model = q.string("model", OPTIONAL) ?? null;
  const keyId = q.string("key_id", OPTIONAL) ?? null;
  const path = q.string("path", OPTIONAL) ?? null;
  const limitText = q.string("limit", OPTIONAL);
  const limit = pageLimit("limit", limitText, MAX_LIMIT, DEFAULT_LIMIT);
  const cursor = q.string("cursor", OPTIONAL);
  const follow = readFollow(q.string("follow", OPTIONAL));
  q.done();
  const matches = (record: LogRecord): boolean => {
    const ts = Date.parse(record.ts);
    if (since !== null && ts < since) return false;
    if (until !== null && ts >= until) return false;
    if (matchStatus && !matchStatus(record.status)) return false;
    if (model !== null && record.model !== model) return false;
    if (keyId !== null && (record.key_id ?? "anonymous") !== keyId) return false;
    if (path !== null && record.path !== path) return false;
    return true;
  };
  if (follow) {
    const paging = { since, until, limit: limitText ?? null, cursor: cursor ?? null };
    for (const [name, value] of Object.entries(paging)) {
      if (value !== null) throw invalidValue(name, `${name} cannot be combined with follow`);
    }
    const { kv, clock } = ctx.services;
    return followLogs(kv, clock, matches, ctx.signal);
  }
  const position = cursor === undefined ? null : readCursor(cursor);

  // Rows are keyed by the second their records arrived in; walk the seconds newest first,
  // merging the rows of each second so that its records come out newest first too.
  const prefix = [...LOG_PREFIX];
  const start = since === null ? null : [...prefix, logBucket(since)];
  let endBucket = until === null ? null : until;
  if (position !== null && (endBucket === null || position.bucket + 1 < endBucket)) {
    endBucket = position.bucket + 1;
  }
  const end = endBucket === null ? null : [...prefix, endBucket];
  // An empty range (`since` at or after `until`, or a cursor before `since`): KV refuses to
  // list a range whose start is past its end.
  if (start !== null && endBucket !== null && (start[1] as number) >= endBucket) {
    return json({ object: "list", data: [], next_cursor: null });
  }
  const selector: Deno.KvListSelector = start && end
    ? { start, end }
    : start
    ? { prefix, start }
    : end
    ? { prefix, end }
    : { prefix };
  const data: LogRecord[] = [];
  let bucket: number | null = null;
  let pending: LogRecord[] = [];
  /** Takes the records of one second, newest first; returns false once the page is full. */
  const takeSecond = (): boolean => {
    if (bucket === null) return true;
    pending.sort(newestFirst);
    for (const record of pending) {
      if (position !== null && !isAfter(record, position)) continue;
      if (!matches(record)) continue;
      data.push(record);
      if (data.length === limit) return false;
    }
    return true;
  };
  let full = false;
  const entries = ctx.services.kv.list(selector, { reverse: true });
  for await (const { bucket: rowBucket, records } of logRows(entries)) {
    if (rowBucket !== bucket) {
      if (!takeSecond()) {
        full = true;
        break;
      }
      bucket = rowBucket;
      pending = [];
    }
    pending.push(...records);
  }
  if (!full) full = !takeSecond();
  const last = data.at(-1);
  const next = full && last ? `${Date.parse(last.ts)}.${last.request_id}` : null;
  return json({ object: "list", data, next_cursor: next });
}

function newestFirst(a: LogRecord, b: LogRecord): number {
  const ta = Date.parse(a.ts);
  const tb = Date.parse(b.ts);
  return ta !== tb
    ? tb - ta
    : a.request_id < b.request_id
    ? 1
    : a.request_id > b.request_id
    ? -1
    : 0;
}

/** A page ends at a record: the next page starts with the records listed after it. */
interface Cursor {
  ms: number;
  requestId: string;
  bucket: number;
}

/** Whether a record comes after the cursor's record in newest-first order. */
function isAfter(record: LogRecord, cursor: Cursor): boolean {
  const ms = Date.parse(record.ts);
  return ms < cursor.ms || (ms === cursor.ms && record.request_id < cursor.requestId);
}

/** `follow`: `1` or `true` to follow, `0` or `false` (or absent) to list. */
function readFollow(text: string | undefined): boolean {
  if (text === undefined || text === "0" || text === "false") return false;
  if (text === "1" || text === "true") return true;
  throw invalidValue("follow", `expected 1, 0, true or false, but got ${quote(text)}`);
}

function readCursor(text: string): Cursor {
  const m = /^(\d{1,16})\.([A-Za-z0-9_-]{1,128})$/.exec(text);
  if (!m) {
    throw invalidValue("cursor", `expected a next_cursor of this listing, but got ${quote(text)}`);
  }
  const ms = Number(m[1]);
  return { ms, requestId: m[2]!, bucket: logBucket(ms) };
}

function statusMatcher(value: string): (status: number) => boolean {
  if (/^[1-5]\d\d$/.test(value)) {
    const exact = Number(value);
    return (status) => status === exact;
  }
  if (/^[1-5]xx$/i.test(value)) {
    const hundreds = Number(value[0]);
    return (status) => Math.floor(status / 100) === hundreds;
  }
  throw invalidValue(
    "status",
    `expected a status code like 429 or a class like 4xx, but got ${quote(value)}`,
  );
}
