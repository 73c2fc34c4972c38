/// <reference lib="dom" />
/**
 * Real headless Chromium for the web pages' end-to-end tests: Debian's `chromium` (or
 * `chromium-headless-shell`, or `$CHROMIUM`) driven over the DevTools protocol by puppeteer-core,
 * with axe-core for the accessibility check and screenshots into docs/screenshots/.
 */
import puppeteer, { type Browser, type Page } from "npm:puppeteer-core@25.16.0";
import axe from "npm:axe-core@4.14.1";

export type { Browser, Page };

const CANDIDATES = [
  Deno.env.get("CHROMIUM"),
  "/usr/bin/chromium",
  "/usr/bin/chromium-headless-shell",
  "/usr/lib/chromium/chromium",
  "/usr/bin/google-chrome",
];

/** The browser's executable; throws saying how to install it when there is none. */
export function chromiumPath(): string {
  for (const path of CANDIDATES) {
    if (!path) continue;
    try {
      if (Deno.statSync(path).isFile) return path;
    } catch {
      // not here
    }
  }
  throw new Error(
    "no Chromium found: install it with `apt-get install -y chromium` (or set CHROMIUM)",
  );
}

/** Launches headless Chromium. */
export function launch(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
}

/** Desktop and phone viewports of the screenshots. */
export const VIEWPORTS = {
  desktop: { width: 1280, height: 900 },
  // Not `isMobile`: puppeteer reloads the page to switch it, losing what the test did.
  phone: { width: 390, height: 844 },
} as const;

/** Where screenshots go: the README's `docs/screenshots/` with `UPDATE_SCREENSHOTS=1` (then
 * commit them), else `.bench-out/screenshots/` (ignored by git), so that a test run leaves the
 * tree clean. */
const SCREENSHOTS = new URL(
  Deno.env.get("UPDATE_SCREENSHOTS") === "1"
    ? "../../docs/screenshots/"
    : "../../.bench-out/screenshots/",
  import.meta.url,
);

/** Saves full-page screenshots of `page` as `NAME-desktop.png` and `NAME-phone.png` (see
 * {@link SCREENSHOTS}), and leaves the page at the desktop size. */
export async function screenshots(page: Page, name: string): Promise<void> {
  await Deno.mkdir(SCREENSHOTS, { recursive: true });
  for (const [size, viewport] of Object.entries(VIEWPORTS)) {
    await page.setViewport(viewport);
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
    // The whole page: a viewport as tall as the document (steadier than `fullPage`).
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.setViewport({ ...viewport, height });
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
    const path = new URL(`${name}-${size}.png`, SCREENSHOTS);
    await page.screenshot({ path: path.pathname as `${string}.png` });
  }
  await page.setViewport(VIEWPORTS.desktop);
}

/** One accessibility violation as axe reports it. */
export interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** Runs axe-core in `page`; the violations of serious or critical impact. */
export async function seriousViolations(page: Page): Promise<Violation[]> {
  const source = (axe as unknown as { source: string }).source;
  await page.evaluate(source);
  const violations = await page.evaluate(async () => {
    // deno-lint-ignore no-explicit-any
    const result = await (globalThis as any).axe.run(document);
    // deno-lint-ignore no-explicit-any
    return result.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      // deno-lint-ignore no-explicit-any
      nodes: v.nodes.map((n: any) => n.html),
    }));
  }) as Violation[];
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/** The text of the first element matching `selector` (empty when none). */
export function textOf(page: Page, selector: string): Promise<string> {
  return page.$eval(selector, (e) => e.textContent ?? "").catch(() => "");
}
