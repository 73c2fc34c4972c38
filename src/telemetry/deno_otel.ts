/**
 * Which parts of Deno's built-in OpenTelemetry are on, read from the environment as Deno 2.9
 * reads it: `OTEL_DENO` turns tracing and metrics on, `OTEL_DENO_TRACING` and
 * `OTEL_DENO_METRICS` each override it, `OTEL_SDK_DISABLED` turns both off; each takes `true`
 * or `false` in any case, and Deno ignores (with a warning) anything else, `1` included.
 */

/** What Deno exports. */
export interface DenoOtel {
  tracing: boolean;
  metrics: boolean;
}

/** What Deno exports under `env`. */
export function denoOtel(env: (name: string) => string | undefined): DenoOtel {
  const flag = (name: string) => {
    const value = env(name)?.toLowerCase();
    return value === "true" ? true : value === "false" ? false : undefined;
  };
  if (flag("OTEL_SDK_DISABLED")) return { tracing: false, metrics: false };
  const on = flag("OTEL_DENO") ?? false;
  return { tracing: flag("OTEL_DENO_TRACING") ?? on, metrics: flag("OTEL_DENO_METRICS") ?? on };
}
