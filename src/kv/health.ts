/**
 * Whether the KV store still works, and is still the one this process opened.
 *
 * Two failures matter. A store that refuses operations (a full disk, a file made read-only)
 * makes the limits undecidable: limited endpoints answer 503 until a probe write succeeds
 * again. A local file that is deleted or replaced while the process runs is worse, because
 * nothing fails: SQLite goes on writing to the unlinked file, while a process started later
 * opens a fresh one, so the two stop sharing limits, keys and the catalogue. The file's
 * identity (device and inode) is compared with the one seen at start, every second.
 */
import type { Clock } from "../clock.ts";
import { isLocalKvFile } from "./open.ts";

/** The health of the store, as `/healthz` reports it. */
export interface KvStatus {
  healthy: boolean;
  /** Why not, when not healthy. */
  reason: string | null;
}

/** A file's identity, or `null` if there is no file at the path. */
export type FileIdentity = (path: string) => Promise<string | null>;

/** The device and inode of the file at `path`. */
export async function statIdentity(path: string): Promise<string | null> {
  try {
    const info = await Deno.stat(path);
    return `${info.dev}:${info.ino}`;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

/** Options for {@link KvHealth}. */
export interface KvHealthOptions {
  kv: Deno.Kv;
  clock: Clock;
  /** The KV file's path, when the store is a local file (not `:memory:`, a URL or the default). */
  path: string | null;
  identity?: FileIdentity;
  /** Milliseconds between checks of the file, and between probes while failing. */
  intervalMs?: number;
  /** Called when the store turns unhealthy, with the reason (which names no path: `/healthz`
   * shows it to anyone). */
  onUnhealthy?: (reason: string) => void;
}

/** Key of this process's probe writes (one per process, kept a minute). */
const PROBE_PREFIX = ["health", "probe"] as const;

/** Watches the KV store (see the module comment). */
export class KvHealth {
  readonly #kv: Deno.Kv;
  readonly #clock: Clock;
  readonly #path: string | null;
  readonly #identity: FileIdentity;
  readonly #intervalMs: number;
  readonly #onUnhealthy: (reason: string) => void;
  readonly #probeKey = [...PROBE_PREFIX, crypto.randomUUID()];
  #opened: string | null = null;
  /** Set when the file was replaced: only a restart cures that. */
  #replaced: string | null = null;
  /** Set when an operation failed; cleared by a probe write that succeeds. */
  #failing: string | null = null;
  #timer: ReturnType<typeof setInterval> | undefined;
  #lastProbe = -Infinity;
  #probing: Promise<void> | null = null;

  constructor(options: KvHealthOptions) {
    this.#kv = options.kv;
    this.#clock = options.clock;
    this.#path = isLocalKvFile(options.path) ? options.path : null;
    this.#identity = options.identity ?? statIdentity;
    this.#intervalMs = options.intervalMs ?? 1000;
    this.#onUnhealthy = options.onUnhealthy ?? (() => {});
  }

  /** Notes the file's identity and starts watching it. */
  async start(): Promise<void> {
    if (this.#path !== null) this.#opened = await this.#identity(this.#path).catch(() => null);
    this.#timer = setInterval(() => this.#tick(), this.#intervalMs);
    Deno.unrefTimer(this.#timer);
  }

  /** Stops watching. */
  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** The last known state (no I/O): what limited requests are admitted by. */
  get status(): KvStatus {
    const reason = this.#replaced ?? this.#failing;
    return { healthy: reason === null, reason };
  }

  /** Records a KV operation that failed. */
  failed(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.#mark(`KV operation failed: ${message.slice(0, 200)}`);
  }

  /** Checks now (at most once a second; a read and a write): for `/healthz`. */
  async check(): Promise<KvStatus> {
    if (this.#clock.now() - this.#lastProbe >= this.#intervalMs) {
      this.#probing ??= this.#probe().finally(() => (this.#probing = null));
      await this.#probing;
    }
    return this.status;
  }

  async #tick(): Promise<void> {
    await this.#checkFile();
    if (this.#failing !== null) await this.check();
  }

  async #probe(): Promise<void> {
    this.#lastProbe = this.#clock.now();
    await this.#checkFile();
    try {
      await this.#kv.get(["catalogue", "version"]);
      await this.#kv.set(this.#probeKey, this.#lastProbe, { expireIn: 60_000 });
      this.#failing = null;
    } catch (e) {
      this.failed(e);
    }
  }

  async #checkFile(): Promise<void> {
    if (this.#path === null || this.#opened === null || this.#replaced !== null) return;
    let now: string | null;
    try {
      now = await this.#identity(this.#path);
    } catch (e) {
      this.failed(e);
      return;
    }
    if (now === this.#opened) return;
    this.#replaced = `the KV file was ${
      now === null ? "deleted" : "replaced"
    } while in use; restart this process`;
    this.#onUnhealthy(this.#replaced);
  }

  #mark(reason: string): void {
    const was = this.#failing;
    this.#failing = reason;
    if (was === null && this.#replaced === null) this.#onUnhealthy(reason);
  }
}
