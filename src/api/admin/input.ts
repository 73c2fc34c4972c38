import type { RequestContext } from "../../pipeline/context.ts";
import type { Resource } from "../../pipeline/dispatch.ts";
import { ApiError } from "../../errors.ts";
import { readJsonObject } from "../../http/body.ts";
import { quote } from "../../quote.ts";
import { invalidValue } from "../../validation/error.ts";
import { type Fields, OPTIONAL } from "../../validation/reader.ts";
import { queryFields } from "../../validation/query.ts";

/** The JSON object body of an admin request. */
export function readBody(ctx: RequestContext): Promise<Record<string, unknown>> {
  return readJsonObject(ctx.request, ctx.services.config.server, ctx.services.bodyTimers);
}

/** 404 for an admin resource that does not exist. */
export function notFound(what: string, id: string, code: string): ApiError {
  return new ApiError(404, "invalid_request_error", `No ${what} with id ${quote(id)}.`, {
    code,
    param: "id",
  });
}

/** `resource` with handlers that take no query parameters: any sent is refused
 * (`unknown_parameter`), as the admin endpoints that take some refuse the others. */
export function withoutQuery(resource: Resource): Resource {
  const methods: Resource["methods"] = {};
  for (const [method, handler] of Object.entries(resource.methods)) {
    if (!handler) continue;
    methods[method] = (ctx) => {
      queryFields(ctx.url.searchParams).done();
      return handler(ctx);
    };
  }
  return { ...resource, methods };
}

/** The query parameter `name` as a Unix-ms time (an ISO 8601 time or Unix milliseconds), or
 * `null` when absent. */
export function readTime(query: Fields, name: string): number | null {
  const text = query.string(name, OPTIONAL);
  if (text === undefined) return null;
  const ms = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
  if (!Number.isFinite(ms)) {
    throw invalidValue(
      name,
      `expected an ISO 8601 time or Unix milliseconds, but got ${quote(text)}`,
    );
  }
  return ms;
}
