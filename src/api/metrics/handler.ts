/**
 * `GET /metrics`: the gateway's metrics in the Prometheus text format, for the admin token or
 * the metrics token (`metrics.token_env`), so that a scraper needs no admin rights.
 */
import type { SecretToken, TokenAttempts, TokenWords } from "../../auth/admin_token.ts";
import type { GatewayMetrics } from "../../metrics/gateway.ts";
import type { Handler } from "../../pipeline/context.ts";

/** The exposition format's content type (text format 0.0.4). */
const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

const WORDS: TokenWords = {
  missing:
    'GET /metrics needs "Authorization: Bearer <token>" with the admin token or the metrics token.',
  wrong: "Incorrect token for GET /metrics.",
};

/** The handler: 401 unless the request carries one of `tokens` as its bearer token, its
 * wrong guesses counted with the admin API's by `attempts` (429 past the limit). */
export function scrapeMetrics(
  metrics: GatewayMetrics,
  tokens: readonly SecretToken[],
  attempts: TokenAttempts,
): Handler {
  const accepts = (token: string) => tokens.some((secret) => secret.is(token));
  return async (ctx) => {
    await attempts.check(ctx.request, ctx.ip, accepts, WORDS);
    return new Response(metrics.render(), { headers: { "content-type": CONTENT_TYPE } });
  };
}
