import type { ApiError } from "../errors.ts";

const JSON_HEADERS = { "content-type": "application/json" } as const;

/** A JSON response with the given status and extra headers. */
export function json(body: unknown, status = 200, headers?: HeadersInit): Response {
  if (headers === undefined) {
    return new Response(JSON.stringify(body), { status, headers: JSON_HEADERS });
  }
  const h = new Headers(headers);
  h.set("content-type", "application/json");
  return new Response(JSON.stringify(body), { status, headers: h });
}

/** A 200 JSON response from an already serialised body, without copying headers. */
export function jsonText(text: string, status = 200): Response {
  return new Response(text, { status, headers: JSON_HEADERS });
}

/** The JSON error response for an {@link ApiError}. */
export function errorResponse(error: ApiError): Response {
  return json(error.toBody(), error.status, error.headers);
}
