/**
 * The web pages over HTTP on a real port (no browser): what the server sends — the catalogue
 * rendered from the anonymous view, the site text escaped, security and cache headers, the size
 * budget — and that pages are neither limited nor hidden when the admin API is off.
 */
import assert from "node:assert/strict";
import { ASSETS } from "../src/api/pages/assets.ts";
import { admin, startAdminServer } from "./support/admin.ts";
import { startServer, testConfig } from "./support/server.ts";
import { startWebGateway } from "./web/gateway.ts";

const PAGES = ["/", "/playground", "/admin"];

/** The model ids a catalogue page lists, in order. */
function listedModels(html: string): string[] {
  return [...html.matchAll(/data-model="([^"]+)"/g)].map((m) => m[1]!);
}

async function anonymousModels(url: string): Promise<string[]> {
  const list = await (await fetch(`${url}/v1/models`)).json();
  return list.data.map((m: { id: string }) => m.id);
}

Deno.test("/ lists exactly the models /v1/models lists anonymously, as the catalogue changes", async () => {
  await using gateway = await startWebGateway();
  const { server } = gateway;
  const page = async () => await (await fetch(`${server.url}/`)).text();
  assert.deepEqual(listedModels(await page()), await anonymousModels(server.url));
  assert.ok(!listedModels(await page()).includes("sim-keyed"));

  const put = await admin(server, "PUT", "/admin/models/new-public", {
    provider: "sim",
    chat_completions: true,
    featured: true,
    labels: ["<b>bold</b>"],
  });
  assert.equal(put.status, 201);
  await admin(server, "PUT", "/admin/models/sim-chat", {
    provider: "sim",
    chat_completions: true,
    enabled: false,
  });
  const html = await page();
  assert.deepEqual(listedModels(html), await anonymousModels(server.url));
  assert.ok(listedModels(html).includes("new-public") && !listedModels(html).includes("sim-chat"));
  assert.ok(html.includes("&lt;b&gt;bold&lt;/b&gt;") && !html.includes("<b>bold</b>"));
});

Deno.test("/ shows the site text, escaped, the limits of both kinds of caller and the base URL", async () => {
  await using server = await startServer({
    config: testConfig((raw) => {
      raw.site = {
        name: "Docks & <Co>",
        description: 'Models "for" all',
        contact: "ops@docks.example",
      };
      raw.limits = {
        anonymous: { chat: { per_minute: 3, per_day: 40 } },
        key: { images: { per_minute: null, per_day: null } },
      };
    }),
  });
  const html = await (await fetch(`${server.url}/`)).text();
  assert.match(html, /<title>Models · Docks &amp; &lt;Co&gt;<\/title>/);
  assert.match(html, /<h1>Docks &amp; &lt;Co&gt;<\/h1>/);
  assert.ok(html.includes("Models &quot;for&quot; all"));
  assert.ok(html.includes("ops@docks.example"));
  assert.match(
    html,
    /Chat completions<\/th><td>3 \/ minute, 40 \/ day<\/td><td>60 \/ minute, 10,000 \/ day/,
  );
  assert.match(html, /Image generation<\/th><td>[^<]+<\/td><td>no limit<\/td>/);
  assert.ok(html.includes(`<code class="base-url">${server.url}/v1</code>`));
  assert.ok(html.includes(`base_url=&quot;${server.url}/v1&quot;`));
});

Deno.test("behind a trusted proxy the snippets use the proxy's scheme and host", async () => {
  await using server = await startServer({
    config: testConfig((raw) => (raw.server = { ...raw.server as object, trust_proxy: 1 })),
  });
  const headers = { "x-forwarded-proto": "https", "x-forwarded-host": "api.docks.example" };
  const html = await (await fetch(`${server.url}/`, { headers })).text();
  assert.ok(html.includes('<code class="base-url">https://api.docks.example/v1</code>'));
  await using direct = await startServer();
  const untrusted = await (await fetch(`${direct.url}/`, { headers })).text();
  assert.ok(untrusted.includes(`<code class="base-url">${direct.url}/v1</code>`));
});

Deno.test("pages and assets carry security headers and ETags, and answer 304 when unchanged", async () => {
  await using server = await startServer();
  for (const path of [...PAGES, ...[...ASSETS.keys()].map((name) => `/assets/${name}`)]) {
    const res = await fetch(`${server.url}${path}`);
    await res.body?.cancel();
    assert.equal(res.status, 200, path);
    const csp = res.headers.get("content-security-policy") ?? "";
    assert.match(csp, /script-src 'self'(;|$)/, path);
    assert.match(csp, /frame-ancestors 'none'/, path);
    assert.ok(!csp.includes("unsafe-inline"), path);
    assert.equal(res.headers.get("x-content-type-options"), "nosniff", path);
    assert.equal(res.headers.get("referrer-policy"), "no-referrer", path);
    assert.equal(res.headers.get("cache-control"), "no-cache", path);
    const etag = res.headers.get("etag");
    assert.ok(etag, path);
    const again = await fetch(`${server.url}${path}`, {
      headers: { "if-none-match": `"x", ${etag}` },
    });
    assert.equal(again.status, 304, path);
    assert.equal(await again.text(), "");
  }
  const css = await fetch(`${server.url}/assets/style.css`);
  assert.equal(css.headers.get("content-type"), "text/css; charset=utf-8");
  await css.body?.cancel();
  const js = await fetch(`${server.url}/assets/admin.js`);
  assert.equal(js.headers.get("content-type"), "text/javascript; charset=utf-8");
  await js.body?.cancel();
  const missing = await fetch(`${server.url}/assets/nothing.js`);
  assert.equal(missing.status, 404);
  assert.equal((await missing.json()).error.code, "unknown_url");
});

Deno.test("no page has inline script or style, and each loads only its own module", async () => {
  await using server = await startServer();
  for (const path of PAGES) {
    const html = await (await fetch(`${server.url}${path}`)).text();
    const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!);
    assert.equal(scripts.length, 1, path);
    assert.match(scripts[0]!, /^ type="module" src="\/assets\/[a-z]+\.js"$/, path);
    assert.ok(!/\son[a-z]+=/.test(html), `${path} has an inline event handler`);
    assert.ok(!/style=|<style/.test(html), `${path} has inline style`);
    for (const [, src] of html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)) {
      const res = await fetch(`${server.url}${src}`);
      assert.equal(res.status, 200, `${path} → ${src}`);
      await res.body?.cancel();
    }
  }
});

Deno.test("the pages and their files together are under 150 KB", async () => {
  await using server = await startWebGateway();
  let bytes = 0;
  for (const path of [...PAGES, ...[...ASSETS.keys()].map((name) => `/assets/${name}`)]) {
    bytes += (await (await fetch(`${server.server.url}${path}`)).arrayBuffer()).byteLength;
  }
  assert.ok(bytes < 150 * 1024, `${bytes} bytes`);
});

Deno.test("pages are not rate limited, and /admin is a page even with the admin API off", async () => {
  await using server = await startServer({
    config: testConfig((raw) => {
      raw.limits = { anonymous: { other: { per_minute: 1, per_day: 1 } } };
    }),
  });
  for (let i = 0; i < 3; i++) {
    for (const path of PAGES) {
      const res = await fetch(`${server.url}${path}`);
      await res.body?.cancel();
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get("x-ratelimit-limit-requests"), null);
    }
  }
  const api = await fetch(`${server.url}/admin/keys`);
  assert.equal(api.status, 404);
  await api.body?.cancel();
  const head = await fetch(`${server.url}/playground`, { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(await head.text(), "");
  const post = await fetch(`${server.url}/`, { method: "POST" });
  assert.equal(post.status, 405);
  await post.body?.cancel();
});

Deno.test("the admin page's key-name field takes as many characters as the API does", async () => {
  await using server = await startAdminServer();
  const html = await (await fetch(`${server.url}/admin`)).text();
  const max = Number(/id="key-name"[^>]*maxlength="(\d+)"/.exec(html)?.[1]);
  assert.ok(max > 0, "the field has a maxlength");
  const at = await admin(server, "POST", "/admin/keys", { name: "n".repeat(max) });
  assert.equal(at.status, 201);
  const over = await admin(server, "POST", "/admin/keys", { name: "n".repeat(max + 1) });
  assert.equal(over.status, 400);
});
