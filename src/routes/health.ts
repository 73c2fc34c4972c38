import type { RequestContext } from "../context.ts";
import { json } from "../http/response.ts";

/** `GET /healthz`: 200 when KV answers, 503 otherwise (for load balancers). */
export async function health(ctx: RequestContext): Promise<Response> {
  try {
    await ctx.services.kv.get(["catalogue", "version"]);
    return json({ status: "ok" });
  } catch {
    return json({ status: "unavailable", reason: "KV is not reachable" }, 503);
  }
}
