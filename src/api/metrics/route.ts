/**
 * `GET /metrics`: the gateway's metrics in the Prometheus text format, for the admin token or
 * the metrics token (`metrics.token_env`), so that a scraper needs no admin rights.
 */
import type { SecretToken } from "../../auth/admin_token.ts";
import { unauthorized } from "../../errors.ts";
import type { GatewayMetrics } from "../../metrics/gateway.ts";
import type { Handler } from "../../pipeline/context.ts";

/** The exposition format's content type (text format 0.0.4). */
const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** The handler: 401 unless the request carries one of `tokens` as its bearer token. */
export function scrapeMetrics(metrics: GatewayMetrics, tokens: readonly SecretToken[]): Handler {
  return (ctx) => {
    if (!tokens.some((token) => token.matches(ctx.request))) {
      throw unauthorized(
        'GET /metrics needs "Authorization: Bearer <token>" with the admin token or the metrics token.',
      );
    }
    return new Response(metrics.render(), { headers: { "content-type": CONTENT_TYPE } });
  };
}
