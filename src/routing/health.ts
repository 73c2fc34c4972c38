/**
 * What this process knows of each route's health (DESIGN §6.3): recent time to first byte and
 * error rate (exponentially weighted), requests in flight, and a circuit breaker. A breaker
 * opens after consecutive failures and stays open for a cooldown; then one request probes the
 * route (half-open): success closes it, failure opens it again. Time comes from the injected
 * clock. Health is per process: each instance learns it from its own traffic.
 */
import type { Clock } from "../clock.ts";
import type { RouteConfig } from "../config.ts";

/** Breaker and averaging settings. */
export interface HealthOptions {
  clock: Clock;
  /** Consecutive failures that open a route's breaker (default 5). */
  failures?: number;
  /** Milliseconds a breaker stays open before a probe (default 30 s). */
  cooldownMs?: number;
}

/** The breaker's state: closed (in use), open (skipped until `until`), or half-open (one probe
 * in flight). */
export type BreakerState = "closed" | "open" | "half_open";

/** One route's health, as `GET /admin/routes` shows it. */
export interface RouteStats {
  model: string;
  provider: string;
  upstream_model: string;
  weight: number;
  priority: number;
  state: BreakerState;
  /** Exponentially weighted time to first byte, ms (`null` before the first success). */
  ttfb_ms: number | null;
  /** Exponentially weighted share of failures, 0..1. */
  error_rate: number;
  in_flight: number;
  consecutive_failures: number;
  requests: number;
  failures: number;
  /** When an open breaker lets a probe through (ISO time), else `null`. */
  open_until: string | null;
}

/** The weight of the newest observation in the averages. */
const ALPHA = 0.2;

class Health {
  ttfb: number | null = null;
  errorRate = 0;
  inFlight = 0;
  consecutive = 0;
  requests = 0;
  failures = 0;
  openUntil = 0;
  probing = false;

  constructor(readonly model: string, readonly route: RouteConfig) {}
}

/** The health of every route this process has used. */
export class RouteHealth {
  readonly #clock: Clock;
  readonly #threshold: number;
  readonly #cooldownMs: number;
  readonly #routes = new Map<string, Health>();
  /** Each route object's health, found without building its id: choosing among three routes
   * and recording the outcome took 4.9–5.1 µs of CPU building ids on every lookup, 4.3–4.7 µs
   * with this cache. */
  readonly #byRoute = new WeakMap<RouteConfig, Health>();

  constructor(options: HealthOptions) {
    this.#clock = options.clock;
    this.#threshold = options.failures ?? 5;
    this.#cooldownMs = options.cooldownMs ?? 30_000;
  }

  #of(model: string, route: RouteConfig): Health {
    const cached = this.#byRoute.get(route);
    if (cached && cached.model === model) return cached;
    const id = `${model}\u0000${route.provider}\u0000${route.upstream_model}`;
    let health = this.#routes.get(id);
    if (!health) {
      health = new Health(model, route);
      this.#routes.set(id, health);
    }
    this.#byRoute.set(route, health);
    return health;
  }

  /** The breaker's state now. */
  state(model: string, route: RouteConfig): BreakerState {
    const h = this.#of(model, route);
    if (h.openUntil === 0) return "closed";
    if (h.probing) return "half_open";
    return this.#clock.now() >= h.openUntil ? "half_open" : "open";
  }

  /** Whether the route may take a request now: closed, or open with its cooldown over and no
   * probe running (the request becomes the probe). */
  available(model: string, route: RouteConfig): boolean {
    const h = this.#of(model, route);
    if (h.openUntil === 0) return true;
    return !h.probing && this.#clock.now() >= h.openUntil;
  }

  /** How much to favour a route against its peers (1 for a fresh route): lower with a high
   * error rate, a slow first byte against `fastestTtfb`, and requests in flight. */
  score(model: string, route: RouteConfig, fastestTtfb: number | null): number {
    const h = this.#of(model, route);
    const errors = 1 - Math.min(0.9, h.errorRate);
    const latency = h.ttfb === null || fastestTtfb === null ? 1 : fastestTtfb / Math.max(h.ttfb, 1);
    return errors * Math.sqrt(latency) / (1 + h.inFlight);
  }

  /** The route's averaged time to first byte, or `null`. */
  ttfb(model: string, route: RouteConfig): number | null {
    return this.#of(model, route).ttfb;
  }

  /** A request starts on the route (a probe, if its breaker was open). */
  begin(model: string, route: RouteConfig): void {
    const h = this.#of(model, route);
    h.inFlight++;
    h.requests++;
    if (h.openUntil !== 0) h.probing = true;
  }

  /** The route answered (its first byte after `ttfbMs`): the breaker closes. */
  succeeded(model: string, route: RouteConfig, ttfbMs: number): void {
    const h = this.#of(model, route);
    h.inFlight = Math.max(0, h.inFlight - 1);
    h.ttfb = h.ttfb === null ? ttfbMs : h.ttfb + ALPHA * (ttfbMs - h.ttfb);
    h.errorRate *= 1 - ALPHA;
    h.consecutive = 0;
    h.openUntil = 0;
    h.probing = false;
  }

  /** The route failed in a way that is not the caller's fault (`afterStart`: a stream that had
   * begun, already counted out of flight): enough in a row (or a failed probe) open its
   * breaker. */
  failed(model: string, route: RouteConfig, afterStart = false): void {
    const h = this.#of(model, route);
    if (!afterStart) h.inFlight = Math.max(0, h.inFlight - 1);
    h.errorRate += ALPHA * (1 - h.errorRate);
    h.consecutive++;
    h.failures++;
    if (h.probing || h.consecutive >= this.#threshold) {
      h.openUntil = this.#clock.now() + this.#cooldownMs;
    }
    h.probing = false;
  }

  /** A request ended without telling anything of the route (the caller's error, or it left). */
  ended(model: string, route: RouteConfig): void {
    const h = this.#of(model, route);
    h.inFlight = Math.max(0, h.inFlight - 1);
    h.probing = false;
  }

  /** Every route used so far, for the admin API. */
  stats(): RouteStats[] {
    return [...this.#routes.values()].map((h) => ({
      model: h.model,
      provider: h.route.provider,
      upstream_model: h.route.upstream_model,
      weight: h.route.weight,
      priority: h.route.priority,
      state: this.state(h.model, h.route),
      ttfb_ms: h.ttfb === null ? null : Math.round(h.ttfb * 100) / 100,
      error_rate: Math.round(h.errorRate * 1000) / 1000,
      in_flight: h.inFlight,
      consecutive_failures: h.consecutive,
      requests: h.requests,
      failures: h.failures,
      open_until: h.openUntil === 0 ? null : new Date(h.openUntil).toISOString(),
    }));
  }
}
