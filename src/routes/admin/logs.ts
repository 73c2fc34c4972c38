import type { RequestContext } from "../../context.ts";
import { invalidRequest } from "../../errors.ts";
import { json } from "../../http/response.ts";
import { LOG_PREFIX } from "../../log/kv_sink.ts";
import type { LogRecord } from "../../log/record.ts";
import { parseTime, queryParams } from "./input.ts";

const PARAMS = ["since", "until", "status", "model", "key_id", "path", "limit", "cursor"];
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

/**
 * `GET /admin/logs`: request records kept in KV, newest first. Filters: `since` (inclusive)
 * and `until` (exclusive), each an ISO 8601 time or Unix ms; `status` (`429`, or a class
 * like `4xx`); `model`; `key_id` (`anonymous` for requests without a key); `path`; `limit`
 * (1–1000, default 100). When more records match, `next_cursor` is set: pass it as `cursor`
 * (with the same filters) for the next page.
 */
export async function listLogs(ctx: RequestContext): Promise<Response> {
  const q = queryParams(ctx, PARAMS);
  const since = q.has("since") ? parseTime(q.get("since")!, "since") : null;
  const until = q.has("until") ? parseTime(q.get("until")!, "until") : null;
  const status = q.get("status");
  const matchStatus = status === null ? null : statusMatcher(status);
  const model = q.get("model");
  const keyId = q.get("key_id");
  const path = q.get("path");
  let limit = DEFAULT_LIMIT;
  if (q.has("limit")) {
    const raw = q.get("limit")!;
    limit = /^\d+$/.test(raw) ? Number(raw) : NaN;
    if (!(limit >= 1 && limit <= MAX_LIMIT)) {
      throw invalidRequest(
        `limit: must be an integer from 1 to ${MAX_LIMIT}, not ${JSON.stringify(raw)}.`,
        "limit",
      );
    }
  }
  const prefix = [...LOG_PREFIX];
  const start = since === null ? null : [...prefix, since];
  const end = until === null ? null : [...prefix, until];
  const selector: Deno.KvListSelector = start && end
    ? { start, end }
    : start
    ? { prefix, start }
    : end
    ? { prefix, end }
    : { prefix };
  const options: Deno.KvListOptions = { reverse: true, batchSize: Math.min(500, limit * 2) };
  const cursor = q.get("cursor");
  if (cursor !== null) options.cursor = cursor;
  const iterator = ctx.services.kv.list<LogRecord>(selector, options);
  const data: LogRecord[] = [];
  try {
    for await (const { value } of iterator) {
      if (matchStatus && !matchStatus(value.status)) continue;
      if (model !== null && value.model !== model) continue;
      if (keyId !== null && (value.key_id ?? "anonymous") !== keyId) continue;
      if (path !== null && value.path !== path) continue;
      data.push(value);
      if (data.length === limit) break;
    }
  } catch (e) {
    if (cursor !== null && e instanceof TypeError) {
      throw invalidRequest("cursor: not a cursor from this listing.", "cursor");
    }
    throw e;
  }
  return json({
    object: "list",
    data,
    next_cursor: data.length === limit ? iterator.cursor : null,
  });
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
  throw invalidRequest(
    `status: expected a status code like 429 or a class like 4xx, not ${JSON.stringify(value)}.`,
    "status",
  );
}
