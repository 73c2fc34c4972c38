/** The `site` section: what the web pages say about this service. */
import type { Reader } from "../validation/reader.ts";
import { OPTIONAL_TEXT, orEmpty } from "./rules.ts";
import type { SiteConfig } from "./types.ts";

const SITE_TEXT = { optional: true, nonEmpty: true, maxLength: 1024 } as const;

/** The `site` section, every default filled in. */
export function readSite(r: Reader): SiteConfig {
  const f = orEmpty(r).object();
  const site: SiteConfig = {
    name: f.string("name", OPTIONAL_TEXT) ?? "Switchyard",
    description: f.string("description", SITE_TEXT) ??
      "An OpenAI-compatible API in front of many models.",
    contact: f.string("contact", { ...SITE_TEXT, nullable: true }) ?? null,
  };
  f.done();
  return site;
}
