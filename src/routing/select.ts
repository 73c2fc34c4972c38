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
  const order: RouteConfig[] = [];
  // Most models give every route one priority: one group, no grouping (a stable sort keeps the
  // routes' order within each priority otherwise).
  const sorted = usable.some((r) => r.priority !== usable[0]!.priority)
    ? usable.sort((a, b) => a.priority - b.priority)
    : usable;
  for (let start = 0; start < sorted.length;) {
    let end = start + 1;
    while (end < sorted.length && sorted[end]!.priority === sorted[start]!.priority) end++;
    pickWeighted(model, sorted.slice(start, end), health, random, order);
    start = end;
  }
  return order;
}

/** Appends `group` to `order` in a weighted random order: each route's weight scaled by its
 * health score, sampled without replacement (the first pick is the route that serves). */
function pickWeighted(
  model: string,
  group: RouteConfig[],
  health: RouteHealth,
  random: () => number,
  order: RouteConfig[],
): void {
  let fastest: number | null = null;
  for (const route of group) {
    const ttfb = health.ttfb(model, route);
    if (ttfb !== null && (fastest === null || ttfb < fastest)) fastest = ttfb;
  }
  const weights = group.map((route) => route.weight * health.score(model, route, fastest));
  while (group.length > 0) {
    let total = 0;
    for (const weight of weights) total += weight;
    let point = random() * total;
    let i = 0;
    while (i < group.length - 1 && point >= weights[i]!) point -= weights[i++]!;
    order.push(group.splice(i, 1)[0]!);
    weights.splice(i, 1);
  }
}
