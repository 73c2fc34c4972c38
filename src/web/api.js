// @ts-check
/// <reference lib="dom" />
/** Calls to this service's API from the pages, and reading its answers. */

/** An error answer of the API: its status and message. */
export class ApiFailure extends Error {
  /**
   * @param {number} status
   * @param {string} message
   */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * @typedef {object} CallOptions
 * @property {string} [method]
 * @property {string | null} [token] sent as `Authorization: Bearer`; none when empty
 * @property {unknown} [body] sent as JSON
 * @property {AbortSignal} [signal]
 */

/**
 * Calls the API at `path`; a non-2xx answer is thrown as an {@link ApiFailure}.
 * @param {string} path
 * @param {CallOptions} [options]
 * @returns {Promise<Response>}
 */
export async function call(path, options = {}) {
  /** @type {Record<string, string>} */
  const headers = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  /** @type {RequestInit} */
  const init = { method: options.method ?? "GET", headers };
  if (options.body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(options.body);
  }
  if (options.signal) init.signal = options.signal;
  const response = await fetch(path, init);
  if (!response.ok) throw new ApiFailure(response.status, await errorMessage(response));
  return response;
}

/**
 * Calls the API and reads its JSON answer (`null` for 204).
 * @param {string} path
 * @param {CallOptions} [options]
 * @returns {Promise<any>}
 */
export async function callJson(path, options = {}) {
  const response = await call(path, options);
  return response.status === 204 ? null : await response.json();
}

/**
 * The message of an error answer (OpenAI's `{error: {message}}`, else the status).
 * @param {Response} response
 * @returns {Promise<string>}
 */
async function errorMessage(response) {
  const text = await response.text();
  try {
    const message = JSON.parse(text)?.error?.message;
    if (typeof message === "string") return `${response.status}: ${message}`;
  } catch {
    // not JSON: fall through
  }
  return `${response.status} ${response.statusText}`.trim();
}

/**
 * The `data` of each server-sent event of a response, as it arrives.
 * @param {Response} response
 * @returns {AsyncGenerator<string>}
 */
export async function* sseData(response) {
  if (!response.body) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value.replaceAll("\r\n", "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = event.split("\n").filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5)).join("\n");
        if (data !== "") yield data;
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
