import { FieldError } from "../../config.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { ApiError, invalidRequest } from "../../errors.ts";
import { readJsonObject } from "../../http/body.ts";
import { clipMiddle, quote } from "../../quote.ts";

/** The JSON object body of an admin request. */
export function readBody(ctx: RequestContext): Promise<Record<string, unknown>> {
  return readJsonObject(ctx.request, ctx.services.config.server);
}

/** Runs a validator and turns its {@link FieldError} into a 400 naming the field. */
export function validated<T>(read: () => T): T {
  try {
    return read();
  } catch (e) {
    if (e instanceof FieldError) {
      const param = e.path === "(root)" || e.path === "" ? null : e.path;
      const where = param === null ? "" : `${clipMiddle(param, 200)}: `;
      throw invalidRequest(`${where}${e.message}`, param);
    }
    throw e;
  }
}

/** 404 for an admin resource that does not exist. */
export function notFound(what: string, id: string, code: string): ApiError {
  return new ApiError(404, "invalid_request_error", `No ${what} with id ${quote(id)}.`, {
    code,
    param: "id",
  });
}

/** The query parameters of an admin request, rejecting names not in `allowed` (typos). */
export function queryParams(ctx: RequestContext, allowed: readonly string[]): URLSearchParams {
  const params = ctx.url.searchParams;
  for (const name of params.keys()) {
    if (!allowed.includes(name)) {
      throw invalidRequest(
        `Unknown query parameter ${quote(name)}; allowed: ${allowed.join(", ")}.`,
        name,
      );
    }
  }
  return params;
}

/** A Unix-ms time from an ISO 8601 string or a number of milliseconds; 400 naming `param`. */
export function parseTime(value: string, param: string): number {
  const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms)) {
    throw invalidRequest(
      `${param}: expected an ISO 8601 time or Unix milliseconds, not ${quote(value)}.`,
      param,
    );
  }
  return ms;
}
