/**
 * The auth step: who the request says it is. An API key (or none: the anonymous caller) on the
 * public API, a malformed, unknown, revoked or disabled one a 401; the admin token on the admin
 * API, where a request without it reaches no handler: it is answered 401 after admission as
 * the anonymous caller in the `other` scope.
 */
import type { AdminToken } from "../auth/admin_token.ts";
import { authenticate } from "../auth/authenticate.ts";
import type { KeyStore } from "../auth/keys.ts";
import type { Next, Step } from "./compose.ts";
import type { Endpoint, RequestContext } from "./context.ts";
import type { StoreGuard } from "./store_guard.ts";

/** Identifies callers by API key in `keys`, and admins by `adminToken` (`null`: no admin
 * API, so no admin endpoints). */
export function auth(
  adminToken: AdminToken | null,
  keys: KeyStore,
  store: StoreGuard,
): Step<RequestContext> {
  return (ctx, next) => {
    switch (ctx.endpoint.auth) {
      case "none":
        return next(ctx);
      case "admin":
        return checkAdmin(ctx, adminToken).then(() => next(ctx));
      case "key":
        return byKey(ctx, next, keys, store);
    }
  };
}

async function byKey(
  ctx: RequestContext,
  next: Next<RequestContext>,
  keys: KeyStore,
  store: StoreGuard,
): Promise<Response> {
  store.check();
  // A batch line runs as its batch's owner (only the app's internal entry point sets this).
  if (ctx.onBehalf !== null) {
    ctx.caller = ctx.onBehalf.caller;
    return await next(ctx);
  }
  try {
    // Google's `?key=` is a key only on the Gemini API's paths.
    const url = ctx.endpoint.errors === "gemini" ? ctx.url : undefined;
    ctx.caller = await authenticate(ctx.request, keys, url);
  } catch (e) {
    throw store.failure(e, ctx);
  }
  return await next(ctx);
}

async function checkAdmin(ctx: RequestContext, adminToken: AdminToken | null): Promise<void> {
  if (adminToken === null) throw new Error("an admin endpoint without an admin token");
  try {
    await adminToken.authorize(ctx.request, ctx.ip);
  } catch (e) {
    ctx.endpoint = refused(e, ctx.endpoint);
  }
}

/** The endpoint of a request to `endpoint` refused before its handler: counted, then
 * answered `error` (in metrics, under the route it asked for). */
function refused(error: unknown, endpoint: Endpoint): Endpoint {
  return {
    handler: () => {
      throw error;
    },
    scope: "other",
    auth: "none",
    json: false,
    ...(endpoint.path !== undefined ? { path: endpoint.path } : {}),
  };
}
