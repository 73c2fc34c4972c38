/**
 * `/`: the catalogue as an anonymous visitor sees it (exactly what `/v1/models` lists without a
 * key), the limits that apply with and without a key, and snippets to call the API with. Rendered
 * on the server from the catalogue, so it needs no script and shows at once.
 */
import { ANONYMOUS_VIEWER } from "../../catalogue/model.ts";
import type { ModelRecord } from "../../catalogue/model.ts";
import { visibleModels } from "../../catalogue/access.ts";
import type { Config, LimitScope, ScopeLimits, WindowLimit } from "../../config/types.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { escapeHtml, layout } from "./layout.ts";
import { etagOf, serve } from "./headers.ts";

/** `GET /`: the catalogue page. */
export function homePage(ctx: RequestContext): Response {
  const { catalogue, providers, config } = ctx.services;
  const models = visibleModels(catalogue, providers, ANONYMOUS_VIEWER);
  const body = renderHome(config, models, baseUrl(ctx));
  return serve(ctx.request, { body, type: "text/html; charset=utf-8", etag: etagOf(body) });
}

/** The API's base URL as the visitor reached it (through a trusted proxy: as the proxy says). */
export function baseUrl(ctx: RequestContext): string {
  let { protocol, host } = ctx.url;
  if (ctx.services.config.server.trust_proxy > 0) {
    const proto = ctx.request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim();
    const forwardedHost = ctx.request.headers.get("x-forwarded-host")?.split(",")[0]?.trim();
    if (proto === "https" || proto === "http") protocol = `${proto}:`;
    if (forwardedHost && /^[A-Za-z0-9.:\[\]-]+$/.test(forwardedHost)) host = forwardedHost;
  }
  return `${protocol}//${host}/v1`;
}

/** The catalogue page for `models` (already filtered and sorted) and the API at `base`. */
export function renderHome(config: Config, models: readonly ModelRecord[], base: string): string {
  const featured = models.filter((m) => m.featured);
  const rest = models.filter((m) => !m.featured);
  const example = models.find((m) => m.chat_completions)?.id ?? "MODEL";
  const { site } = config;
  const main = `<section class="intro">
<h1>${escapeHtml(site.name)}</h1>
<p class="lead">${escapeHtml(site.description)}</p>
<p>API base URL: <code class="base-url">${
    escapeHtml(base)
  }</code> \u2014 OpenAI-compatible; no key needed for the public models.${
    site.contact === null
      ? ""
      : ` For a key, more models or higher limits: ${escapeHtml(site.contact)}.`
  }</p>
<p><a class="button" href="/playground">Try it in the playground</a></p>
</section>
<section aria-labelledby="models-h">
<h2 id="models-h">Models</h2>
${
    models.length === 0
      ? "<p>No models are open to anonymous visitors. With a key, <code>GET /v1/models</code> lists yours.</p>"
      : ""
  }${
    featured.length > 0
      ? `<h3>Featured</h3>\n<ul class="models featured">${featured.map(modelCard).join("")}</ul>\n`
      : ""
  }${
    rest.length > 0
      ? `<h3>${featured.length > 0 ? "More models" : "All models"}</h3>\n<ul class="models">${
        rest.map(modelCard).join("")
      }</ul>\n`
      : ""
  }<p class="note">Models that need a key are not listed here: <code>GET /v1/models</code> with your key lists every model it may use.</p>
</section>
<section aria-labelledby="limits-h">
<h2 id="limits-h">Limits</h2>
${limitsTable(config.limits.anonymous, config.limits.key)}
<p class="note">Counted per IP address without a key, per key with one. Over a limit, requests get <code>429</code> with <code>retry-after</code>.</p>
</section>
<section aria-labelledby="code-h">
<h2 id="code-h">Call the API</h2>
${snippets(base, example)}
</section>`;
  return layout(site, { path: "/", title: "Models", script: "home.js", main });
}

/** Capability flags as badge texts. */
function capabilities(m: ModelRecord): string[] {
  const caps: string[] = [];
  if (m.chat_completions) caps.push("chat");
  if (m.function_calling) caps.push("tools");
  if (m.image_input) caps.push("image input");
  if (m.moderation) caps.push(m.default_moderation ? "moderation (default)" : "moderation");
  if (m.image_generation) caps.push("image generation");
  if (m.embeddings) caps.push("embeddings");
  if (m.rerank) caps.push("rerank");
  if (m.access !== "public") caps.push(m.access === "key" ? "needs a key" : "preview");
  return caps;
}

const NUMBER = new Intl.NumberFormat("en-US");

function modelCard(m: ModelRecord): string {
  const details = [`by ${escapeHtml(m.owned_by)}`];
  if (m.context_length !== null) {
    details.push(`${NUMBER.format(m.context_length)} tokens of context`);
  }
  if (m.image_generation) details.push(`sizes ${m.image_generation.sizes.join(", ")}`);
  const badges = capabilities(m).map((c) => `<li class="badge cap">${c}</li>`).join("");
  const labels = m.labels.map((l) => `<li class="badge label">${escapeHtml(l)}</li>`).join("");
  return `<li class="model" data-model="${escapeHtml(m.id)}"><h4><code>${
    escapeHtml(m.id)
  }</code></h4><p class="meta">${
    details.join(" · ")
  }</p><ul class="badges" aria-label="Capabilities">${badges}</ul>${
    labels === "" ? "" : `<ul class="badges" aria-label="Labels">${labels}</ul>`
  }</li>`;
}

const SCOPE_NAMES: Readonly<Record<LimitScope, string>> = {
  chat: "Chat completions",
  other: "Other requests (models, moderation)",
  images: "Image generation",
};

function windowText(limit: WindowLimit): string {
  const parts: string[] = [];
  if (limit.per_minute !== null) parts.push(`${NUMBER.format(limit.per_minute)} / minute`);
  if (limit.per_day !== null) parts.push(`${NUMBER.format(limit.per_day)} / day`);
  return parts.length === 0 ? "no limit" : parts.join(", ");
}

function limitsTable(anonymous: ScopeLimits, key: ScopeLimits): string {
  const rows = (Object.keys(SCOPE_NAMES) as LimitScope[]).map((scope) =>
    `<tr><th scope="row">${SCOPE_NAMES[scope]}</th><td>${windowText(anonymous[scope])}</td><td>${
      windowText(key[scope])
    }</td></tr>`
  ).join("");
  return `<div class="scroll" tabindex="0"><table class="limits"><thead><tr><th scope="col">Requests</th><th scope="col">Without a key</th><th scope="col">With a key</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

function snippets(base: string, model: string): string {
  const tabs: [string, string, string][] = [
    [
      "curl",
      "curl",
      `curl ${base}/chat/completions \\
  -H "Content-Type: application/json" \\
  -d '{"model": "${model}", "messages": [{"role": "user", "content": "Hello!"}]}'
# with a key, add: -H "Authorization: Bearer $SWITCHYARD_API_KEY"`,
    ],
    [
      "python",
      "Python (openai)",
      `from openai import OpenAI

client = OpenAI(base_url="${base}", api_key="sk-sy-...")  # your key
stream = client.chat.completions.create(
    model="${model}",
    messages=[{"role": "user", "content": "Hello!"}],
    stream=True,
)
for chunk in stream:
    print(chunk.choices[0].delta.content or "", end="")`,
    ],
    [
      "js",
      "JavaScript (openai)",
      `import OpenAI from "openai";

const client = new OpenAI({ baseURL: "${base}", apiKey: "sk-sy-..." }); // your key
const stream = await client.chat.completions.create({
  model: "${model}",
  messages: [{ role: "user", content: "Hello!" }],
  stream: true,
});
for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? "");`,
    ],
    [
      "ai-sdk",
      "AI SDK",
      `import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { streamText } from "ai";

const switchyard = createOpenAICompatible({
  name: "switchyard",
  baseURL: "${base}",
  apiKey: process.env.SWITCHYARD_API_KEY, // optional: public models need none
});
const result = streamText({ model: switchyard("${model}"), prompt: "Hello!" });
for await (const text of result.textStream) process.stdout.write(text);`,
    ],
  ];
  return `<p class="note">The OpenAI SDKs need a key (they send one always); curl and the AI SDK work without one.</p>
<div>${
    tabs.map(([id, label, code]) =>
      `<section class="snippet" id="snippet-${id}" aria-label="${label}"><h3>${label}</h3><pre tabindex="0"><code>${
        escapeHtml(code)
      }</code></pre></section>`
    ).join("")
  }</div>`;
}
