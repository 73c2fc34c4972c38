import assert from "node:assert/strict";
import { Cors } from "../../src/http/cors.ts";
import { compose } from "../../src/pipeline/compose.ts";
import type { Endpoint, Handler, RequestContext } from "../../src/pipeline/context.ts";
import { dispatch, type Resource } from "../../src/pipeline/dispatch.ts";
import { testContext } from "../support/pipeline.ts";

const list: Handler = () => new Response("list");
const create: Handler = () => new Response("create");
const RESOURCES: Resource[] = [
  { path: "/v1/things", methods: { GET: list, POST: create }, scope: "other", json: true },
  { path: "/v1/things/:id", methods: { GET: list }, scope: "other" },
  { path: "/healthz", methods: { GET: list }, scope: null },
  { path: "/admin/things", methods: { GET: list }, scope: null, admin: true },
];

/** Routes `request` and returns the endpoint chosen, its context, and its handler's answer
 * (or what it threw). */
async function dispatched(request: Request) {
  let chosen: Endpoint | undefined;
  const run = compose<RequestContext>([dispatch(RESOURCES, new Cors(["*"]))], (ctx) => {
    chosen = ctx.endpoint;
    return ctx.endpoint.handler(ctx);
  });
  const ctx = testContext(request);
  let answer: unknown;
  try {
    answer = await run(ctx);
  } catch (e) {
    answer = e;
  }
  const { handler: _, ...fields } = chosen!;
  return { fields, ctx, answer };
}

/** The fields of an endpoint that is not limited and identifies no caller. */
const UNLIMITED = { scope: null, auth: "none", json: false, errors: "openai" } as const;

const req = (path: string, init?: RequestInit) => new Request(`http://localhost${path}`, init);

Deno.test("dispatch: a resource's handler, with its scope, auth and body; HEAD reaches GET", async () => {
  const post = await dispatched(req("/v1/things", { method: "POST", body: "{}" }));
  assert.deepEqual(post.fields, {
    scope: "other",
    auth: "key",
    json: true,
    errors: "openai",
    path: "/v1/things",
  });
  assert.equal(await (post.answer as Response).text(), "create");
  const head = await dispatched(req("/v1/things/", { method: "HEAD" }));
  assert.equal(await (head.answer as Response).text(), "list");
  const health = await dispatched(req("/healthz"));
  assert.deepEqual(health.fields, { ...UNLIMITED, path: "/healthz" });
  const admin = await dispatched(req("/admin/things"));
  assert.deepEqual(admin.fields, { ...UNLIMITED, auth: "admin", path: "/admin/things" });
});

Deno.test("dispatch: path parameters are decoded", async () => {
  const { ctx } = await dispatched(req("/v1/things/a%20b"));
  assert.deepEqual(ctx.params, { id: "a b" });
});

Deno.test("dispatch: an unknown path reaches the 404 endpoint, counted as other for the anonymous caller", async () => {
  const { fields, answer } = await dispatched(req("/v1/nothing", { method: "DELETE" }));
  assert.deepEqual(fields, { scope: "other", auth: "none", json: false });
  assert.equal((answer as { status: number }).status, 404);
  assert.match((answer as Error).message, /DELETE \/v1\/nothing/);
});

Deno.test("dispatch: a wrong method is a 405 with Allow; OPTIONS is a 204 with Allow", async () => {
  const wrong = await dispatched(req("/v1/things", { method: "DELETE" }));
  assert.deepEqual(wrong.fields, { ...UNLIMITED, scope: "other", path: "/v1/things" });
  const error = wrong.answer as { status: number; headers: Record<string, string> };
  assert.equal(error.status, 405);
  assert.deepEqual(error.headers, { allow: "GET, HEAD, POST, OPTIONS" });
  const options = (await dispatched(req("/v1/things", { method: "OPTIONS" }))).answer as Response;
  assert.equal(options.status, 204);
  assert.equal(options.headers.get("allow"), "GET, HEAD, POST, OPTIONS");
});

Deno.test("dispatch: a wrong method on an unlimited route counts nowhere; on an admin route the token is checked", async () => {
  const health = await dispatched(req("/healthz", { method: "POST" }));
  assert.deepEqual(health.fields, { ...UNLIMITED, path: "/healthz" });
  const admin = await dispatched(req("/admin/things", { method: "DELETE" }));
  assert.deepEqual(admin.fields, {
    ...UNLIMITED,
    scope: "other",
    auth: "admin",
    path: "/admin/things",
  });
});

Deno.test("dispatch: a CORS preflight reaches the preflight endpoint on any path", async () => {
  const preflight = { origin: "https://app.example", "access-control-request-method": "POST" };
  for (const path of ["/v1/things", "/nowhere"]) {
    const { fields, answer } = await dispatched(
      req(path, { method: "OPTIONS", headers: preflight }),
    );
    assert.deepEqual(fields, { scope: "other", auth: "none", json: false });
    assert.equal((answer as Response).status, 204);
    assert.equal((answer as Response).headers.get("access-control-allow-origin"), "*");
  }
});
