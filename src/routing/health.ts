/**
 * What this process knows of each route's health (DESIGN §6.3): recent time to first byte and
 * error rate (exponentially weighted), requests in flight, and a circuit breaker. A breaker
 * opens after consecutive failures and stays open for a cooldown; then one request probes the
 * route (half-open): success closes it, failure opens it again. Time comes from the injected
 * clock. Health is per process: each instance learns it from its own traffic.
 */
import type { Clock } from "../clock.ts";
import type { RouteConfig } from "../config/types.ts";

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

/** The breaker's settings, shared by the routes of one {@link RouteHealth}. */
interface Settings {
  clock: Clock;
  threshold: number;
  cooldownMs: number;
}

/** One route's health and breaker. A routed model holds its routes' handles, so that choosing
 * a route and recording the outcome look nothing up. */
export class RouteState {
  ttfb: number | null = null;
  errorRate = 0;
  inFlight = 0;
  consecutive = 0;
  requests = 0;
  failures = 0;
  openUntil = 0;
  probing = false;

  constructor(
    readonly model: string,
    /** The route as the catalogue has it now (its weight and priority may change). */
    public route: RouteConfig,
    readonly settings: Settings,
  ) {}

  /** The breaker's state now. */
  state(): BreakerState {
    if (this.openUntil === 0) return "closed";
    if (this.probing) return "half_open";
    return this.settings.clock.now() >= this.openUntil ? "half_open" : "open";
  }

  /** Whether the route may take a request now: closed, or open with its cooldown over and no
   * probe running (the request becomes the probe). */
  available(): boolean {
    if (this.openUntil === 0) return true;
    return !this.probing && this.settings.clock.now() >= this.openUntil;
  }

  /** How much to favour the route against its peers (1 for a fresh route): lower with a high
   * error rate, a slow first byte against `fastestTtfb`, and requests in flight. */
  score(fastestTtfb: number | null): number {
    const errors = 1 - Math.min(0.9, this.errorRate);
    const latency = this.ttfb === null || fastestTtfb === null
      ? 1
      : fastestTtfb / Math.max(this.ttfb, 1);
    return errors * Math.sqrt(latency) / (1 + this.inFlight);
  }

  /** A request starts on the route (a probe, if its breaker was open). */
  begin(): void {
    this.inFlight++;
    this.requests++;
    if (this.openUntil !== 0) this.probing = true;
  }

  /** The route answered (its first byte after `ttfbMs`): the breaker closes. */
  succeeded(ttfbMs: number): void {
    this.started(ttfbMs);
    this.completed();
  }

  /** A stream's first byte came after `ttfbMs`; whether the route is well is told when the
   * stream ends ({@link completed}, {@link failed} with `afterStart`, or {@link released}). */
  started(ttfbMs: number): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.ttfb = this.ttfb === null ? ttfbMs : this.ttfb + ALPHA * (ttfbMs - this.ttfb);
  }

  /** A stream that began ended well (or an answer came whole): the breaker closes. */
  completed(): void {
    this.errorRate *= 1 - ALPHA;
    this.consecutive = 0;
    this.openUntil = 0;
    this.probing = false;
  }

  /** A stream that began ended without telling anything of the route (the client left). */
  released(): void {
    this.probing = false;
  }

  /** The route failed in a way that is not the caller's fault (`afterStart`: a stream that had
   * begun, already counted out of flight): enough in a row (or a failed probe) open its
   * breaker. */
  failed(afterStart = false): void {
    if (!afterStart) this.inFlight = Math.max(0, this.inFlight - 1);
    this.errorRate += ALPHA * (1 - this.errorRate);
    this.consecutive++;
    this.failures++;
    if (this.probing || this.consecutive >= this.settings.threshold) {
      this.openUntil = this.settings.clock.now() + this.settings.cooldownMs;
    }
    this.probing = false;
  }

  /** A request ended without telling anything of the route (the caller's error, or it left). */
  ended(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.probing = false;
  }

  /** What `GET /admin/routes` shows of it. */
  stats(): RouteStats {
    const { route } = this;
    return {
      model: this.model,
      provider: route.provider,
      upstream_model: route.upstream_model,
      weight: route.weight,
      priority: route.priority,
      state: this.state(),
      ttfb_ms: this.ttfb === null ? null : Math.round(this.ttfb * 100) / 100,
      error_rate: Math.round(this.errorRate * 1000) / 1000,
      in_flight: this.inFlight,
      consecutive_failures: this.consecutive,
      requests: this.requests,
      failures: this.failures,
      open_until: this.openUntil === 0 ? null : new Date(this.openUntil).toISOString(),
    };
  }
}

/** The health of every route this process has used. */
export class RouteHealth {
  readonly #settings: Settings;
  readonly #routes = new Map<string, RouteState>();

  constructor(options: HealthOptions) {
    this.#settings = {
      clock: options.clock,
      threshold: options.failures ?? 5,
      cooldownMs: options.cooldownMs ?? 30_000,
    };
  }

  /** The health of `model`'s `route`: one state per model, provider and upstream model, kept
   * across catalogue changes. */
  of(model: string, route: RouteConfig): RouteState {
    const id = `${model}\u0000${route.provider}\u0000${route.upstream_model}`;
    let state = this.#routes.get(id);
    if (!state) {
      state = new RouteState(model, route, this.#settings);
      this.#routes.set(id, state);
    }
    state.route = route;
    return state;
  }

  /** Every route used so far, for the admin API. */
  stats(): RouteStats[] {
    return [...this.#routes.values()].map((state) => state.stats());
  }
}
