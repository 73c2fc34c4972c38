/**
 * The metrics as the app wires them: kept when `metrics.enabled` and a token can read them (the
 * admin token, or the metrics token `metrics.token_env` names), with their route
 * (`GET /metrics`), their settle hook and the timing of KV commits.
 */
import { scrapeMetrics } from "../api/metrics/handler.ts";
import { SecretToken, type TokenAttempts } from "../auth/admin_token.ts";
import type { Config } from "../config/types.ts";
import { countRequest } from "../pipeline/metrics.ts";
import type { Resource } from "../pipeline/dispatch.ts";
import type { SettleHook } from "../pipeline/settle.ts";
import { GatewayMetrics, type MetricsSources } from "./gateway.ts";

/** The app's metrics and the tokens that may read them. */
export class AppMetrics {
  readonly #metrics: GatewayMetrics;
  readonly #tokens: readonly SecretToken[];
  readonly #attempts: TokenAttempts;

  private constructor(
    metrics: GatewayMetrics,
    tokens: readonly SecretToken[],
    attempts: TokenAttempts,
  ) {
    this.#metrics = metrics;
    this.#tokens = tokens;
    this.#attempts = attempts;
  }

  /** The metrics `config` and the environment ask for, or `null` (off, or no token set); wrong
   * tokens are counted by `attempts`, with the admin API's. */
  static configured(
    config: Config,
    env: (name: string) => string | undefined,
    sources: MetricsSources,
    attempts: TokenAttempts,
  ): AppMetrics | null {
    if (!config.metrics.enabled) return null;
    const tokens = [
      env("SWITCHYARD_ADMIN_TOKEN"),
      config.metrics.token_env ? env(config.metrics.token_env) : undefined,
    ].filter((token) => token !== undefined && token !== "").map((t) => new SecretToken(t!));
    return tokens.length === 0
      ? null
      : new AppMetrics(new GatewayMetrics(sources), tokens, attempts);
  }

  /** `GET /metrics`. */
  resource(): Resource {
    return {
      path: "/metrics",
      methods: { GET: scrapeMetrics(this.#metrics, this.#tokens, this.#attempts) },
      scope: null,
    };
  }

  /** The settle hook that counts each request. */
  hook(): SettleHook {
    return countRequest(this.#metrics);
  }

  /** Counts a batch line whose result was written. */
  batchLine(ok: boolean): void {
    this.#metrics.batchLine(ok);
  }

  /** What to tell each KV commit's duration of `store` to: the group commit and the log sink
   * time their own commits (the store is not wrapped, so every other use of it is untouched). */
  commitObserver(store: string): (seconds: number) => void {
    return (seconds) => this.#metrics.kvCommit(store, seconds);
  }
}
