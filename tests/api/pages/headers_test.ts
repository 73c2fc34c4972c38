import assert from "node:assert/strict";
import { CONTENT_SECURITY_POLICY, etagOf, serve } from "../../../src/api/pages/headers.ts";
import { escapeHtml } from "../../../src/api/pages/layout.ts";

const FILE = {
  body: "body { color: red }",
  type: "text/css; charset=utf-8",
  etag: etagOf("body { color: red }"),
};

Deno.test("etagOf: the same text gives the same tag; a one-character change another", () => {
  assert.equal(etagOf("abc"), etagOf("abc"));
  assert.notEqual(etagOf("abc"), etagOf("abd"));
  assert.notEqual(etagOf("ab"), etagOf("ab\0"));
  assert.match(etagOf(""), /^"[0-9a-z]+-0"$/);
});

Deno.test("serve: 200 with the body, or 304 when If-None-Match names the tag (also in a list)", async () => {
  const fresh = serve(new Request("http://x/assets/style.css"), FILE);
  assert.equal(fresh.status, 200);
  assert.equal(await fresh.text(), FILE.body);
  assert.equal(fresh.headers.get("content-type"), FILE.type);
  assert.equal(fresh.headers.get("content-security-policy"), CONTENT_SECURITY_POLICY);
  for (const tags of [FILE.etag, `"other", ${FILE.etag}`]) {
    const cached = serve(new Request("http://x/", { headers: { "if-none-match": tags } }), FILE);
    assert.equal(cached.status, 304);
    assert.equal(cached.body, null);
    assert.equal(cached.headers.get("etag"), FILE.etag);
    assert.equal(cached.headers.get("x-content-type-options"), "nosniff");
  }
  const stale = serve(new Request("http://x/", { headers: { "if-none-match": '"old"' } }), FILE);
  assert.equal(stale.status, 200);
  await stale.body?.cancel();
});

Deno.test("escapeHtml: every character that could end text or an attribute", () => {
  assert.equal(
    escapeHtml(`<a href="x" title='y'>&</a>`),
    "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;",
  );
});
