/**
 * The documentation's links resolve: every relative link in README.md, CHANGELOG.md and docs/
 * names a file of the repository, and every `#anchor` a heading of the page it points into.
 */
import assert from "node:assert/strict";
import { ROOT } from "./support/process.ts";

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[`*_[\]()]/g, "").replace(/[^\p{L}\p{N}\- ]/gu, "")
    .replaceAll(" ", "-");
}

/** The anchors of a Markdown page's headings (code blocks left out). */
function anchors(text: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const heading = !fenced && /^#{1,6} (.*)$/.exec(line);
    if (heading) out.add(slug(heading[1]!));
  }
  return out;
}

/** The links of a page outside code blocks and inline code. */
function links(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
}

const pages = [
  "README.md",
  "CHANGELOG.md",
  ...[...Deno.readDirSync(`${ROOT}docs`)]
    .filter((e) => e.isFile && e.name.endsWith(".md")).map((e) => `docs/${e.name}`),
];

Deno.test("every relative link of the README, the CHANGELOG and docs/ resolves", async () => {
  const broken: string[] = [];
  for (const page of pages) {
    const text = await Deno.readTextFile(`${ROOT}${page}`);
    const dir = page.includes("/") ? page.slice(0, page.lastIndexOf("/") + 1) : "";
    for (const link of links(text)) {
      if (/^[a-z]+:/i.test(link)) continue;
      const [path, anchor] = link.split("#") as [string, string | undefined];
      const target = path === "" ? page : new URL(path, `file:///${dir}`).pathname.slice(1);
      let targetText: string;
      try {
        const info = await Deno.stat(`${ROOT}${target}`);
        if (!info.isFile || anchor === undefined) continue;
        targetText = await Deno.readTextFile(`${ROOT}${target}`);
      } catch {
        broken.push(`${page}: ${link} (no such file)`);
        continue;
      }
      if (!anchors(targetText).has(anchor)) broken.push(`${page}: ${link} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test("the README stays short: one page to start from, the rest in docs/", async () => {
  const lines = (await Deno.readTextFile(`${ROOT}README.md`)).split("\n").length;
  assert.ok(lines <= 250, `README.md has ${lines} lines`);
});
