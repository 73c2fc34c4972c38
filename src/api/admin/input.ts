import type { RequestContext } from "../../pipeline/context.ts";
import type { Route } from "../../pipeline/route.ts";
import { ApiError } from "../../errors.ts";
import { readJsonObject } from "../../http/body.ts";
import { quote } from "../../quote.ts";
import { invalidValue } from "../../validation/error.ts";
import { Fields, OPTIONAL, readJson } from "../../validation/reader.ts";

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

/** The query parameters of a request, read as fields: `done()` rejects the ones not read
 * (`unknown_parameter`), then any given more than once (`limit=1&limit=2`), whose first value
 * is the one read. */
class QueryFields extends Fields {
  /** How many times each parameter was given. */
  readonly #counts: ReadonlyMap<string, number>;

  constructor(values: Record<string, string>, counts: ReadonlyMap<string, number>) {
    super(readJson(values), values);
    this.#counts = counts;
  }

  override done(): void {
    super.done();
    for (const [name, count] of this.#counts) {
      if (count > 1) throw invalidValue(name, `expected one value, but got ${count}`);
    }
  }
}

/** The query parameters of an admin request as fields: a handler reads the ones it takes,
 * then `done()` rejects the others (typos) and any given more than once. */
export function queryFields(ctx: RequestContext): Fields {
  const values: Record<string, string> = Object.create(null);
  const counts = new Map<string, number>();
  for (const [name, value] of ctx.url.searchParams) {
    if (!(name in values)) values[name] = value;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return new QueryFields(values, counts);
}

/** `route` with handlers that take no query parameters: any sent is refused
 * (`unknown_parameter`), as the admin endpoints that take some refuse the others. */
export function withoutQuery(route: Route): Route {
  const methods: Route["methods"] = {};
  for (const [method, handler] of Object.entries(route.methods)) {
    if (!handler) continue;
    methods[method] = (ctx) => {
      queryFields(ctx).done();
      return handler(ctx);
    };
  }
  return { ...route, methods };
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
