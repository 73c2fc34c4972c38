/** The frame every page shares: head, header with navigation, main content and footer. */
import type { SiteConfig } from "../../config/types.ts";

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** `text` safe inside HTML text and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** The pages, by the path that serves them. */
const PAGES = [
  { path: "/", label: "Models" },
  { path: "/playground", label: "Playground" },
  { path: "/admin", label: "Admin" },
] as const;

/** What one page puts in the frame. */
export interface Page {
  /** Which page this is (its navigation entry is marked current). */
  path: typeof PAGES[number]["path"];
  title: string;
  /** The page's module under `/assets/`, e.g. `home.js`. */
  script: string;
  /** The content of `<main>`, already HTML. */
  main: string;
}

/** The whole HTML document of `page` for `site`. */
export function layout(site: SiteConfig, page: Page): string {
  const name = escapeHtml(site.name);
  const nav = PAGES.map(({ path, label }) =>
    `<a href="${path}"${path === page.path ? ' aria-current="page"' : ""}>${label}</a>`
  ).join("");
  const contact = site.contact === null
    ? ""
    : `<p>Keys, more models or higher limits: ${escapeHtml(site.contact)}</p>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)} · ${name}</title>
<meta name="description" content="${escapeHtml(site.description)}">
<link rel="stylesheet" href="/assets/style.css">
<script type="module" src="/assets/${page.script}"></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><a class="brand" href="/">${name}</a><nav aria-label="Pages">${nav}</nav></header>
<main id="main">
${page.main}
</main>
<footer class="bottom">${contact}<p>Served by Switchyard, an OpenAI-compatible model gateway.</p></footer>
</body>
</html>
`;
}
