/**
 * Stopping on SIGTERM or SIGINT: the first signal starts a drain (no new connections, open
 * requests and streams may finish) that may last `graceMs`; when it runs out the process is
 * ended anyway, and a second signal ends it at once. The grace timer does not keep the
 * process alive by itself: a drain that finishes early lets the process end early.
 */

/** What to do on a stop signal. */
export interface ShutdownActions {
  /** How long the drain may take, in milliseconds. */
  graceMs: number;
  /** One-line notices (the app's logger). */
  info(message: string): void;
  warn(message: string): void;
  /** Starts the drain. */
  drain(): void;
  /** Called when the grace period ran out with the drain unfinished. */
  expired(): void;
}

const SIGNALS = ["SIGTERM", "SIGINT"] as const;

/**
 * Listens for the stop signals from the moment it is made, and acts once {@link attach}
 * says how: a signal that came while the app was being built (under `deno serve --parallel`
 * a worker can still be building when another already serves) starts the drain on attach.
 */
export class ShutdownSignals {
  readonly #exit: (code: number) => void;
  #actions: ShutdownActions | null = null;
  #signal: Deno.Signal | null = null;

  constructor(exit: (code: number) => void = (code) => Deno.exit(code)) {
    this.#exit = exit;
    for (const signal of SIGNALS) {
      try {
        Deno.addSignalListener(signal, () => this.#received(signal));
      } catch {
        // A platform without this signal (SIGTERM on Windows) or without signals at all
        // (Deno Deploy), which stops the process its own way.
      }
    }
  }

  /** Says what to do on a signal; drains at once if one came already. */
  attach(actions: ShutdownActions): void {
    this.#actions = actions;
    if (this.#signal !== null) this.#drain(this.#signal);
  }

  #received(signal: Deno.Signal): void {
    if (this.#signal !== null) {
      const message = `${signal} again: exiting now without waiting for open requests`;
      if (this.#actions) this.#actions.warn(message);
      else console.error(`switchyard: ${message}`);
      this.#exit(130);
      return;
    }
    this.#signal = signal;
    if (this.#actions) this.#drain(signal);
  }

  #drain(signal: Deno.Signal): void {
    const actions = this.#actions!;
    const seconds = actions.graceMs / 1000;
    actions.info(
      `${signal}: shutting down: no new connections; open requests and streams get up to ` +
        `${seconds} s (server.shutdown_grace_seconds); a second signal exits at once`,
    );
    const timer = setTimeout(() => {
      actions.warn(`the ${seconds} s shutdown grace period is over: exiting with requests open`);
      actions.expired();
    }, actions.graceMs);
    Deno.unrefTimer(timer);
    actions.drain();
  }
}
