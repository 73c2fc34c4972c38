/**
 * The web pages (`/`, `/playground`, `/admin`) and their files (`/assets/...`). They call the
 * public and admin APIs from the browser like any client, so they add no power of their own:
 * the playground obeys the caller's limits, and every admin action is checked by the admin API.
 */
import type { RequestContext } from "../../pipeline/context.ts";
import adminMain from "../../web/admin.html" with { type: "text" };
import playgroundMain from "../../web/playground.html" with { type: "text" };
import { etagOf, serve } from "./headers.ts";
import { layout, type Page } from "./layout.ts";

export { asset } from "./assets.ts";
export { homePage } from "./home.ts";

function page(ctx: RequestContext, page: Page): Response {
  const body = layout(ctx.services.config.site, page);
  return serve(ctx.request, { body, type: "text/html; charset=utf-8", etag: etagOf(body) });
}

/** `GET /playground`: chat, tools, images, moderation and image generation against the API. */
export function playgroundPage(ctx: RequestContext): Response {
  return page(ctx, {
    path: "/playground",
    title: "Playground",
    script: "playground.js",
    main: playgroundMain,
  });
}

/** `GET /admin`: the operator's dashboard over the admin API (which checks the token). */
export function adminPage(ctx: RequestContext): Response {
  return page(ctx, { path: "/admin", title: "Admin", script: "admin.js", main: adminMain });
}
