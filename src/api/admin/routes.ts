import { json } from "../../http/response.ts";
import type { RequestContext } from "../../pipeline/context.ts";

/** `GET /admin/routes` (DESIGN §5): the health of every route this instance has used: breaker
 * state, averaged time to first byte, error rate, requests in flight. */
export function listRoutes(ctx: RequestContext): Response {
  return json({ object: "list", data: ctx.services.routes.stats() });
}
