/**
 * The pages' static files, embedded in the program (so `deno compile` carries them) and served
 * from memory under `/assets/`.
 */
import admin from "../../web/admin.js" with { type: "text" };
import api from "../../web/api.js" with { type: "text" };
import chart from "../../web/chart.js" with { type: "text" };
import dom from "../../web/dom.js" with { type: "text" };
import home from "../../web/home.js" with { type: "text" };
import playground from "../../web/playground.js" with { type: "text" };
import style from "../../web/style.css" with { type: "text" };
import { pathNotFound } from "../../errors.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { etagOf, serve, type Served } from "./headers.ts";

const JS = "text/javascript; charset=utf-8";

function file(body: string, type: string): Served {
  return { body, type, etag: etagOf(body) };
}

/** Every file under `/assets/`, by name. */
export const ASSETS: ReadonlyMap<string, Served> = new Map([
  ["style.css", file(style, "text/css; charset=utf-8")],
  ["dom.js", file(dom, JS)],
  ["api.js", file(api, JS)],
  ["chart.js", file(chart, JS)],
  ["home.js", file(home, JS)],
  ["playground.js", file(playground, JS)],
  ["admin.js", file(admin, JS)],
]);

/** `GET /assets/{name}`: one of the pages' files, or 404. */
export function asset(ctx: RequestContext): Response {
  const served = ASSETS.get(ctx.params.name!);
  if (!served) throw pathNotFound(ctx.request.method, ctx.url.pathname);
  return serve(ctx.request, served);
}
