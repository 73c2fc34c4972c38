import OpenAI from "npm:openai@7.55.0";
import { waitFor } from "./wait.ts";
import type { TestServer } from "./server.ts";

/** Options for {@link openaiClient}. */
export interface ClientOptions {
  /** An API key to send; without one the client sends no `Authorization` header. */
  apiKey?: string;
  /** Retries the client makes on 429/5xx (default 0, so tests see every failure). */
  maxRetries?: number;
}

/**
 * The official OpenAI client pointed at a test server. Without `apiKey` it calls anonymously:
 * the client insists on a key, so it gets a placeholder and the `Authorization` header is
 * removed with `defaultHeaders: { Authorization: null }`.
 */
export function openaiClient(server: TestServer, options: ClientOptions = {}): OpenAI {
  return new OpenAI({
    baseURL: `${server.url}/v1`,
    apiKey: options.apiKey ?? "anonymous",
    maxRetries: options.maxRetries ?? 0,
    ...(options.apiKey === undefined ? { defaultHeaders: { Authorization: null } } : {}),
  });
}

/** `POST /v1/chat/completions` with a JSON body over raw fetch. */
export function postChat(
  server: TestServer,
  body: unknown,
  init: { headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...init.headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...(init.signal ? { signal: init.signal } : {}),
  });
}

/** The request log record with this request id, once it has been written. */
export function logRecord(
  server: TestServer,
  requestId: string | null,
): Promise<Record<string, unknown>> {
  return waitFor(
    () => server.output.records().find((r) => r.request_id === requestId),
    `the log record of ${requestId}`,
  );
}
