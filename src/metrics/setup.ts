/**
 * The metrics as the app wires them: kept when `metrics.enabled` and a token can read them (the
 * admin token, or the metrics token `metrics.token_env` names), with their route
 * (`GET /metrics`), their settle hook and the timing of KV commits.
 */
import { scrapeMetrics } from "../api/metrics/route.ts";
import { SecretToken } from "../auth/admin_token.ts";
import type { Config } from "../config.ts";
import { countRequest } from "../pipeline/metrics.ts";
import type { Route } from "../pipeline/route.ts";
import type { SettleHook } from "../pipeline/settle.ts";
import { GatewayMetrics, type MetricsSources } from "./gateway.ts";

/** The app's metrics and the tokens that may read them. */
export class AppMetrics {
  readonly #metrics: GatewayMetrics;
  readonly #tokens: readonly SecretToken[];

  private constructor(metrics: GatewayMetrics, tokens: readonly SecretToken[]) {
    this.#metrics = metrics;
    this.#tokens = tokens;
  }

  /** The metrics `config` and the environment ask for, or `null` (off, or no token set). */
  static configured(
    config: Config,
    env: (name: string) => string | undefined,
    sources: MetricsSources,
  ): AppMetrics | null {
    if (!config.metrics.enabled) return null;
    const tokens = [
      env("SWITCHYARD_ADMIN_TOKEN"),
      config.metrics.token_env ? env(config.metrics.token_env) : undefined,
    ].filter((token) => token !== undefined && token !== "").map((t) => new SecretToken(t!));
    return tokens.length === 0 ? null : new AppMetrics(new GatewayMetrics(sources), tokens);
  }

  /** `GET /metrics`. */
  route(): Route {
    return {
      path: "/metrics",
      methods: { GET: scrapeMetrics(this.#metrics, this.#tokens) },
      scope: null,
    };
  }

  /** The settle hook that counts each request. */
  hook(): SettleHook {
    return countRequest(this.#metrics);
  }

  /** What to tell each KV commit's duration of `store` to: the group commit and the log sink
   * time their own commits (the store is not wrapped, so every other use of it is untouched). */
  commitObserver(store: string): (seconds: number) => void {
    return (seconds) => this.#metrics.kvCommit(store, seconds);
  }
}
