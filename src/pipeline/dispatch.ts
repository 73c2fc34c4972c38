/**
 * The dispatch step: which endpoint answers the request. A `Host` that is no host (400), a CORS
 * preflight, an unknown path (404) and a wrong method (405) reach no resource's handler: their
 * endpoints answer after admission, so that they count against the caller's IP in the `other`
 * scope (a wrong method on a resource that is not limited, like `/healthz`, counts against
 * nothing).
 */
import type { LimitScope } from "../config/types.ts";
import { invalidRequest, methodNotAllowed, pathNotFound } from "../errors.ts";
import { quote } from "../quote.ts";
import type { Cors } from "../http/cors.ts";
import { PathTable } from "../http/path_table.ts";
import type { Step } from "./compose.ts";
import type { Endpoint, EndpointErrors, Handler, RequestContext } from "./context.ts";
import { preflightEndpoint } from "./cors.ts";

/** A resource of the app: its handlers and the rate-limit scope it counts against. */
export interface Resource {
  path: string;
  methods: Partial<Record<string, Handler>>;
  /** Rate-limit scope, or `null` for resources that are not limited (health, admin). */
  scope: LimitScope | null;
  /** Admin resources need the admin token instead of an API key. */
  admin?: boolean;
  /** Its handlers take a JSON object body (read for them by the body step). */
  json?: boolean;
  /** The error shape of its protocol (OpenAI's unless said). */
  errors?: EndpointErrors;
  /** Its calls use tokens that count against token limits and budgets (as the chat scope's
   * always do): embeddings. */
  metered?: boolean;
  /** What differs for one method: Gemini's `POST /v1/models/{model}:{method}` is a chat call
   * with a JSON body on the path of OpenAI's `GET /v1/models/{id}`. */
  overrides?: Partial<
    Record<string, { scope: LimitScope | null; json: boolean; errors?: EndpointErrors }>
  >;
}

/** A resource's endpoints, built once: one per method, and the one for any other method. */
interface ResourceEndpoints {
  path: string;
  methods: Partial<Record<string, Endpoint>>;
  otherMethod: Endpoint;
}

/** The endpoint of a path no resource has. */
const NOT_FOUND: Endpoint = {
  handler: (ctx) => {
    throw pathNotFound(ctx.request.method, ctx.url.pathname);
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

/** Chooses the endpoint of each request among `resources`, CORS preflights answered by `cors`. */
export function dispatch(resources: readonly Resource[], cors: Cors): Step<RequestContext> {
  const table = new PathTable<Endpoint, ResourceEndpoints>(resources.map(endpointsOf));
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
    const match = table.match(ctx.url.pathname);
    if (!match) {
      ctx.endpoint = NOT_FOUND;
      return next(ctx);
    }
    const { methods, otherMethod } = match.def;
    ctx.endpoint = methods[request.method] ??
      (request.method === "HEAD" ? methods.GET : undefined) ?? otherMethod;
    ctx.params = match.params;
    return next(ctx);
  };
}

function endpointsOf(resource: Resource): ResourceEndpoints {
  const auth = resource.admin ? "admin" : resource.scope === null ? "none" : "key";
  const errors = resource.errors ?? "openai";
  const methods: Partial<Record<string, Endpoint>> = {};
  for (const [method, handler] of Object.entries(resource.methods)) {
    if (handler) {
      const json = resource.json ?? false;
      const endpoint: Endpoint = {
        handler,
        scope: resource.scope,
        auth,
        json,
        errors,
        path: resource.path,
        ...resource.overrides?.[method],
      };
      // Only metered endpoints say so: the others' shape stays as it was.
      methods[method] = endpoint.scope === "chat" || resource.metered
        ? { ...endpoint, metered: true }
        : endpoint;
    }
  }
  // HEAD is answered wherever GET is (see `resource`), after GET as RFC 9110's examples list it.
  const names = Object.keys(resource.methods);
  const at = names.indexOf("GET") + 1;
  const allow = at > 0 ? [...names.slice(0, at), "HEAD", ...names.slice(at)] : names;
  allow.push("OPTIONS");
  return {
    path: resource.path,
    methods,
    otherMethod: {
      handler: (ctx) => otherMethod(ctx, allow),
      scope: resource.scope !== null || resource.admin ? "other" : null,
      // An admin resource tells its methods only to the admin.
      auth: resource.admin ? "admin" : "none",
      json: false,
      errors,
      path: resource.path,
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
