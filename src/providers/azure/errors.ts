/**
 * Azure OpenAI's error bodies: OpenAI's shape, plus a content filter's verdict. A prompt the
 * filter refused is a 400 `content_filter` whose `innererror.content_filter_result` says which
 * categories were filtered; the message passed to the caller names them.
 */
import { parseOpenAIError } from "../openai/provider.ts";
import type { UpstreamErrorDetail } from "../upstream/error_detail.ts";
import { isObject } from "../wire.ts";

/** Reads an Azure error body (see the module comment). */
export function parseAzureError(body: unknown): UpstreamErrorDetail {
  const detail = parseOpenAIError(body);
  const error = isObject(body) && isObject(body.error) ? body.error : null;
  if (error === null || detail.code !== "content_filter") return detail;
  const inner = isObject(error.innererror) ? error.innererror : null;
  const filtered = inner && isObject(inner.content_filter_result)
    ? filteredCategories(inner.content_filter_result)
    : [];
  const message = detail.message ?? "The prompt was refused by Azure OpenAI's content filter.";
  return {
    ...detail,
    type: detail.type ?? "invalid_request_error",
    message: filtered.length === 0 ? message : `${message} (filtered: ${filtered.join(", ")})`,
  };
}

/** The categories a content filter result filtered, with their severity when it gave one:
 * `violence (medium)`, `jailbreak`. */
export function filteredCategories(result: Record<string, unknown>): string[] {
  const names: string[] = [];
  for (const [name, verdict] of Object.entries(result)) {
    if (!isObject(verdict) || verdict.filtered !== true || !/^[a-z_]{1,40}$/.test(name)) continue;
    const severity = typeof verdict.severity === "string" && /^[a-z]{1,20}$/.test(verdict.severity)
      ? ` (${verdict.severity})`
      : "";
    names.push(name + severity);
  }
  return names;
}
