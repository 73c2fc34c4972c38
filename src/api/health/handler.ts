import type { RequestContext } from "../../pipeline/context.ts";
import { json } from "../../http/response.ts";
import { VERSION } from "../../version.ts";

/** `GET /healthz`: 200 when KV answers reads and writes and is still the store this process
 * opened, 503 with the reason otherwise (for load balancers). Also how many request records
 * were kept out of the KV log (its budget, or a failed write), and the running version. */
export async function health(ctx: RequestContext): Promise<Response> {
  const { kvHealth, logger } = ctx.services;
  const kv = await kvHealth.check();
  const log_records_not_stored = logger.recordsNotStored;
  const version = VERSION;
  if (kv.healthy) return json({ status: "ok", version, log_records_not_stored });
  return json({ status: "unavailable", reason: kv.reason, version, log_records_not_stored }, 503);
}
