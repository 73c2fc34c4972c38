/** A model's `routes` (DESIGN §4.1), and the error for a provider id the config lacks. */
import { quote } from "../quote.ts";
import type { Fields, Reader } from "../validation/reader.ts";
import { OPTIONAL_TEXT, TEXT } from "./rules.ts";
import type { ProviderConfig, RouteConfig } from "./types.ts";

/** Routes of one model at most. */
const MAX_ROUTES = 16;

/** 400-style error for a provider id the config does not have. */
export function unknownProvider(
  field: Reader,
  id: string,
  providers: ReadonlyMap<string, ProviderConfig>,
): Error {
  const known = [...providers.keys()].map((p) => `"${p}"`).join(", ");
  return field.invalid(`unknown provider ${quote(id)} (known: ${known})`);
}

/** A model's `routes` (DESIGN §4.1): each a known provider and its model id, with a weight and
 * a priority; a model has either `provider` or `routes`. */
export function readRoutes(
  f: Fields,
  providers: ReadonlyMap<string, ProviderConfig>,
  id: string,
): RouteConfig[] {
  const field = f.get("routes");
  if (f.has("provider") || f.has("upstream_model")) {
    throw field.invalid("a model has either provider (and upstream_model) or routes, not both");
  }
  const items = f.array("routes", { minItems: 1, maxItems: MAX_ROUTES })!;
  return items.map((item) => {
    const r = item.object();
    const providerId = r.string("provider", TEXT);
    if (!providers.has(providerId)) throw unknownProvider(r.get("provider"), providerId, providers);
    const route: RouteConfig = {
      provider: providerId,
      upstream_model: r.string("upstream_model", OPTIONAL_TEXT) ?? id,
      weight: r.number("weight", { optional: true, min: 0.001, max: 1_000_000 }) ?? 1,
      priority: r.integer("priority", { optional: true, min: 0, max: 100 }) ?? 0,
    };
    r.done();
    return route;
  });
}
