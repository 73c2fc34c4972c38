/** An `Upstream` over canned answers, for the tests of the upstream client's parts. */
import type { ProviderConfig } from "../../src/config/types.ts";
import { FetchHttpClient } from "../../src/http/client/fetch.ts";
import type { UpstreamErrorDetail } from "../../src/providers/upstream/error_detail.ts";
import { Upstream } from "../../src/providers/upstream/upstream.ts";
import { providerDeps } from "./provider_call.ts";

/** An upstream's error detail that says `message`, its other fields `null` unless in `extra`. */
export const said = (
  message: string,
  extra: Partial<UpstreamErrorDetail> = {},
): UpstreamErrorDetail => ({
  message,
  type: null,
  code: null,
  param: null,
  ...extra,
});

/** A chat call's request to an upstream, streamed or not. */
export const chatRequest = (stream: boolean) => ({
  method: "POST" as const,
  path: "/chat/completions",
  body: {},
  signal: new AbortController().signal,
  requestId: "req_1",
  stream,
});

const encoder = new TextEncoder();

/** A body that never ends: `head`, then `piece` again and again; counts what was pulled
 * (one piece more than was read: a stream keeps one in its queue). */
export function endless(head: string, piece: string) {
  let pulled = 0;
  let cancelled = false;
  const bytes = encoder.encode(piece);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(head));
    },
    pull(controller) {
      pulled += bytes.length;
      controller.enqueue(bytes.slice());
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, pulled: () => pulled, cancelled: () => cancelled };
}

/** An Upstream whose one answer is `response`, with `config` over the test defaults. */
export function answering(response: Response, config: Partial<ProviderConfig> = {}) {
  const deps = providerDeps("openai", "http://upstream.test/v1", "sk-up", {
    max_retries: 0,
    max_response_bytes: 64 * 1024 * 1024,
    max_event_bytes: 8 * 1024 * 1024,
    ...config,
  });
  deps.http = new FetchHttpClient(() => Promise.resolve(response));
  const upstream = new Upstream(deps, {
    headers: {},
    parseError: (body) => {
      const error = (body as { error?: { message: string; type: string } }).error;
      return error ? said(error.message, { type: error.type }) : said("not JSON");
    },
  });
  return { upstream, request: chatRequest, deps };
}
