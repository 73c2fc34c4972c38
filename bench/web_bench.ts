/**
 * What a page load of `/` costs the server: the whole request through `app.handler` (routing,
 * the anonymous catalogue view, rendering, the ETag, the log record), with the repository's
 * `switchyard.json` catalogue; and the render alone. Target: under 2 ms of CPU per load.
 * `deno task bench:micro`.
 */
import { createApp } from "../src/app.ts";
import { renderHome } from "../src/api/pages/home.ts";
import { visibleModels } from "../src/catalogue/access.ts";
import { ANONYMOUS_VIEWER } from "../src/catalogue/model.ts";
import { parseConfig } from "../src/config/parse.ts";

const raw = JSON.parse(await Deno.readTextFile(new URL("../switchyard.json", import.meta.url)));
const config = parseConfig({ ...raw, kv: { path: ":memory:" } }, "switchyard.json");
const kv = await Deno.openKv(":memory:");
const app = await createApp({
  config,
  kv,
  env: () => undefined,
  output: { stdout() {}, stderr() {} },
});
const info = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 40000 },
  completed: Promise.resolve(),
} as unknown as Deno.ServeHandlerInfo;
const { catalogue, providers } = app.services;

Deno.bench("GET / through app.handler (catalogue page, anonymous)", async () => {
  const res = await app.handler(new Request("http://127.0.0.1:8000/"), info);
  await res.text();
});

Deno.bench("GET / answered 304 (the browser's copy is current)", async (b) => {
  const first = await app.handler(new Request("http://127.0.0.1:8000/"), info);
  await first.body?.cancel();
  const etag = first.headers.get("etag")!;
  b.start();
  const res = await app.handler(
    new Request("http://127.0.0.1:8000/", { headers: { "if-none-match": etag } }),
    info,
  );
  b.end();
  await res.body?.cancel();
});

Deno.bench("renderHome alone", () => {
  renderHome(
    config,
    visibleModels(catalogue, providers, ANONYMOUS_VIEWER),
    "http://127.0.0.1:8000/v1",
  );
});

Deno.bench("GET /assets/playground.js through app.handler", async () => {
  const res = await app.handler(new Request("http://127.0.0.1:8000/assets/playground.js"), info);
  await res.text();
});
