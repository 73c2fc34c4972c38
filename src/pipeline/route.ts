/**
 * The route step: which endpoint answers the request. A `Host` that is no host (400), a CORS
 * preflight, an unknown path (404) and a wrong method (405) reach no route's handler: their
 * endpoints answer after admission, so that they count against the caller's IP in the `other`
 * scope (a wrong method on a route that is not limited, like `/healthz`, counts against
 * nothing).
 */
import type { LimitScope } from "../config.ts";
import { invalidRequest, methodNotAllowed, routeNotFound } from "../errors.ts";
import { quote } from "../quote.ts";
import type { Cors } from "../http/cors.ts";
import { Router } from "../http/router.ts";
import type { Step } from "./compose.ts";
import type { Endpoint, EndpointErrors, Handler, RequestContext } from "./context.ts";
import { preflightEndpoint } from "./cors.ts";

/** A route of the app: its handlers and the rate-limit scope it counts against. */
export interface Route {
  path: string;
  methods: Partial<Record<string, Handler>>;
  /** Rate-limit scope, or `null` for routes that are not limited (health, admin). */
  scope: LimitScope | null;
  /** Admin routes need the admin token instead of an API key. */
  admin?: boolean;
  /** Its handlers take a JSON object body (read for them by the body step). */
  json?: boolean;
  /** The error shape of its protocol (OpenAI's unless said). */
  errors?: EndpointErrors;
}

/** A route's endpoints, built once: one per method, and the one for any other method. */
interface RouteEndpoints {
  path: string;
  methods: Partial<Record<string, Endpoint>>;
  otherMethod: Endpoint;
}

/** The endpoint of a path no route has. */
const NOT_FOUND: Endpoint = {
  handler: (ctx) => {
    throw routeNotFound(ctx.request.method, ctx.url.pathname);
  },
  scope: "other",
  auth: "none",
  json: false,
};

/** The endpoint of a request whose `Host` header is not a host (its path cannot be trusted). */
const INVALID_HOST: Endpoint = {
  handler: (ctx) => {
    throw invalidRequest(
      `The Host header ${quote(ctx.request.headers.get("host"))} is not a host name.`,
      null,
      "invalid_host",
    );
  },
  scope: "other",
  auth: "none",
  json: false,
};

/** Chooses the endpoint of each request among `routes`, CORS preflights answered by `cors`. */
export function route(routes: readonly Route[], cors: Cors): Step<RequestContext> {
  const router = new Router<Endpoint, RouteEndpoints>(routes.map(endpointsOf));
  const preflight = preflightEndpoint(cors);
  return (ctx, next) => {
    const { request } = ctx;
    if (ctx.invalidHost) {
      ctx.endpoint = INVALID_HOST;
      return next(ctx);
    }
    if (cors.isPreflight(request)) {
      ctx.endpoint = preflight;
      return next(ctx);
    }
    const match = router.match(ctx.url.pathname);
    if (!match) {
      ctx.endpoint = NOT_FOUND;
      return next(ctx);
    }
    const { methods, otherMethod } = match.route;
    ctx.endpoint = methods[request.method] ??
      (request.method === "HEAD" ? methods.GET : undefined) ?? otherMethod;
    ctx.params = match.params;
    return next(ctx);
  };
}

function endpointsOf(route: Route): RouteEndpoints {
  const auth = route.admin ? "admin" : route.scope === null ? "none" : "key";
  const errors = route.errors ?? "openai";
  const methods: Partial<Record<string, Endpoint>> = {};
  for (const [method, handler] of Object.entries(route.methods)) {
    if (handler) {
      const json = route.json ?? false;
      methods[method] = { handler, scope: route.scope, auth, json, errors, path: route.path };
    }
  }
  // HEAD is answered wherever GET is (see `route`), after GET as RFC 9110's examples list it.
  const names = Object.keys(route.methods);
  const at = names.indexOf("GET") + 1;
  const allow = at > 0 ? [...names.slice(0, at), "HEAD", ...names.slice(at)] : names;
  allow.push("OPTIONS");
  return {
    path: route.path,
    methods,
    otherMethod: {
      handler: (ctx) => otherMethod(ctx, allow),
      scope: route.scope !== null || route.admin ? "other" : null,
      // An admin route tells its methods only to the admin.
      auth: route.admin ? "admin" : "none",
      json: false,
      errors,
      path: route.path,
    },
  };
}

/** `OPTIONS` (not a preflight): 204 with `Allow`; any other method: 405. */
function otherMethod(ctx: RequestContext, allow: readonly string[]): Response {
  const { method } = ctx.request;
  if (method === "OPTIONS") {
    return new Response(null, { status: 204, headers: { allow: allow.join(", ") } });
  }
  throw methodNotAllowed(method, ctx.url.pathname, allow);
}
