/**
 * The order in which a request tries a model's routes (DESIGN §6.3): routes whose breaker lets
 * them serve, best priority first; within a priority a weighted random order, each route's
 * weight scaled by its health score (recent errors, slow first bytes, requests in flight). If
 * every route's breaker is open, all of them in priority order: a request is never refused
 * without trying.
 */
import type { RouteConfig } from "../config/types.ts";
import type { RouteState } from "./health.ts";

/** A route with its health. */
export interface Candidate {
  route: RouteConfig;
  health: RouteState;
}

/** `candidates` in the order to try them; `random` returns numbers in [0, 1). */
export function routeOrder<T extends Candidate>(
  candidates: readonly T[],
  random: () => number,
): T[] {
  const usable = candidates.filter((c) => c.health.available());
  if (usable.length === 0) return [...candidates].sort(byPriority);
  const order: T[] = [];
  // Most models give every route one priority: one group, no grouping (a stable sort keeps the
  // routes' order within each priority otherwise).
  const first = usable[0]!.route.priority;
  const sorted = usable.some((c) => c.route.priority !== first) ? usable.sort(byPriority) : usable;
  for (let start = 0; start < sorted.length;) {
    let end = start + 1;
    while (end < sorted.length && sorted[end]!.route.priority === sorted[start]!.route.priority) {
      end++;
    }
    pickWeighted(sorted.slice(start, end), random, order);
    start = end;
  }
  return order;
}

function byPriority(a: Candidate, b: Candidate): number {
  return a.route.priority - b.route.priority;
}

/** Appends `group` to `order` in a weighted random order: each route's weight scaled by its
 * health score, sampled without replacement (the first pick is the route that serves). */
function pickWeighted<T extends Candidate>(group: T[], random: () => number, order: T[]): void {
  let fastest: number | null = null;
  for (const { health } of group) {
    const ttfb = health.ttfb;
    if (ttfb !== null && (fastest === null || ttfb < fastest)) fastest = ttfb;
  }
  // Weights in a typed array, removed by shifting: with `map` and `splice` the weights' array
  // changed kind between integers and fractions from call to call, and V8 deoptimised this
  // function on nearly every request.
  const weights = new Float64Array(group.length);
  for (let i = 0; i < group.length; i++) {
    weights[i] = group[i]!.route.weight * group[i]!.health.score(fastest);
  }
  for (let n = group.length; n > 0; n--) {
    let total = 0;
    for (let i = 0; i < n; i++) total += weights[i]!;
    let point = random() * total;
    let i = 0;
    while (i < n - 1 && point >= weights[i]!) point -= weights[i++]!;
    order.push(group[i]!);
    for (; i < n - 1; i++) {
      group[i] = group[i + 1]!;
      weights[i] = weights[i + 1]!;
    }
  }
}
