import type { ApiError, ErrorStyle } from "../errors.ts";

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

/** The JSON error response for an {@link ApiError}, in the front door's protocol's shape. */
export function errorResponse(
  error: ApiError,
  style: ErrorStyle = "openai",
  requestId?: string,
): Response {
  const body = style === "anthropic" ? error.toAnthropicBody(requestId) : error.toBody();
  return json(body, error.status, error.headers);
}
