/**
 * The order in which a request tries a model's routes (DESIGN §6.3): routes whose breaker lets
 * them serve, best priority first; within a priority a weighted random order, each route's
 * weight scaled by its health score (recent errors, slow first bytes, requests in flight). If
 * every route's breaker is open, all of them in priority order: a request is never refused
 * without trying.
 */
import type { RouteConfig } from "../config.ts";
import type { RouteHealth } from "./health.ts";

/** The routes of `model` in the order to try them; `random` returns numbers in [0, 1). */
export function routeOrder(
  model: string,
  routes: readonly RouteConfig[],
  health: RouteHealth,
  random: () => number,
): RouteConfig[] {
  const usable = routes.filter((route) => health.available(model, route));
  if (usable.length === 0) return [...routes].sort((a, b) => a.priority - b.priority);
  const priorities = [...new Set(usable.map((r) => r.priority))].sort((a, b) => a - b);
  const order: RouteConfig[] = [];
  for (const priority of priorities) {
    const group = usable.filter((r) => r.priority === priority);
    const ttfbs = group.map((r) => health.ttfb(model, r)).filter((t): t is number => t !== null);
    const fastest = ttfbs.length > 0 ? Math.min(...ttfbs) : null;
    const weighted = group.map((route) => ({
      route,
      weight: route.weight * health.score(model, route, fastest),
    }));
    // Weighted sampling without replacement: the first pick is the route that serves.
    while (weighted.length > 0) {
      const total = weighted.reduce((sum, w) => sum + w.weight, 0);
      let point = random() * total;
      let i = 0;
      while (i < weighted.length - 1 && point >= weighted[i]!.weight) {
        point -= weighted[i++]!.weight;
      }
      order.push(weighted.splice(i, 1)[0]!.route);
    }
  }
  return order;
}
