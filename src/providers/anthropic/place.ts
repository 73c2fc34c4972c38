/** Where a Messages API upstream serves a body: Anthropic's paths, or another cloud's. */

/** Where the Messages API serves a body (`model` the upstream's), and the body it takes there. */
export type MessagesPlace = (
  endpoint: "messages" | "count_tokens",
  body: Record<string, unknown>,
) => { path: string; body: Record<string, unknown> };

/** Anthropic's own places: `/v1/messages` and `/v1/messages/count_tokens`, the body as it is. */
export const ANTHROPIC_PLACE: MessagesPlace = (endpoint, body) => ({
  path: endpoint === "count_tokens" ? "/v1/messages/count_tokens" : "/v1/messages",
  body,
});
