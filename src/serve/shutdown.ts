/**
 * Stopping on SIGTERM or SIGINT: the first signal starts a drain (no new connections, open
 * requests and streams may finish) that may last `graceMs`; when it runs out the process is
 * ended anyway, and a second signal ends it at once. The grace timer does not keep the
 * process alive by itself: a drain that finishes early lets the process end early.
 */

/** What {@link onShutdownSignals} needs. */
export interface ShutdownOptions {
  /** How long the drain may take, in milliseconds. */
  graceMs: number;
  /** One-line notices (the app's logger). */
  info(message: string): void;
  warn(message: string): void;
  /** Starts the drain. */
  drain(): void;
  /** Called when the grace period ran out with the drain unfinished. */
  expired(): void;
  /** Ends the process at once (a second signal). */
  exit?: (code: number) => void;
}

const SIGNALS = ["SIGTERM", "SIGINT"] as const;

/** Listens for the stop signals; returns a function that stops listening. */
export function onShutdownSignals(options: ShutdownOptions): () => void {
  const exit = options.exit ?? ((code: number) => Deno.exit(code));
  let draining = false;
  const onSignal = (signal: Deno.Signal) => {
    if (draining) {
      options.warn(`${signal} again: exiting now without waiting for open requests`);
      exit(130);
      return;
    }
    draining = true;
    const seconds = options.graceMs / 1000;
    options.info(
      `${signal}: shutting down: no new connections; open requests and streams get up to ` +
        `${seconds} s (server.shutdown_grace_seconds); a second signal exits at once`,
    );
    const timer = setTimeout(() => {
      options.warn(`the ${seconds} s shutdown grace period is over: exiting with requests open`);
      options.expired();
    }, options.graceMs);
    Deno.unrefTimer(timer);
    options.drain();
  };
  const listeners = SIGNALS.map((signal) => [signal, () => onSignal(signal)] as const);
  for (const [signal, listener] of listeners) Deno.addSignalListener(signal, listener);
  return () => {
    for (const [signal, listener] of listeners) Deno.removeSignalListener(signal, listener);
  };
}
