/**
 * The metrics (`GET /metrics`) as a settle hook: each settled request adds to the counters and
 * histograms of {@link GatewayMetrics}, once, with its final status, durations and usage.
 */
import type { GatewayMetrics } from "../metrics/gateway.ts";
import type { SettleHook } from "./settle.ts";

/** Methods named in labels; any other is `other`, so that no client can add series. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** Counts each settled request in `metrics`. */
export function countRequest(metrics: GatewayMetrics): SettleHook {
  return (ctx, { status, error, usage, ms, firstByteMs, streamed }) => {
    const { endpoint, provider } = ctx;
    const method = METHODS.has(ctx.request.method) ? ctx.request.method : "other";
    metrics.request({
      route: endpoint?.path ?? (method === "OPTIONS" ? "preflight" : "unmatched"),
      method,
      status,
      // The requested id is a label only once it resolved to a catalogue model.
      model: provider === null ? "" : ctx.model ?? "",
      provider,
      error,
      scope: endpoint?.scope ?? null,
      streamBegan: streamed,
      seconds: ms / 1000,
      firstByteSeconds: firstByteMs === null ? null : firstByteMs / 1000,
      inputTokens: usage?.input ?? 0,
      outputTokens: usage?.output ?? 0,
      fallbacks: ctx.fallbacks,
      guardrails: ctx.guardrails,
      cache: ctx.cache,
    });
  };
}
