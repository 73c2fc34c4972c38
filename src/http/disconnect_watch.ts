/**
 * Notices clients that close their connection while their request is still being handled.
 *
 * Deno 2.9's own HTTP/1.1 server fires `request.signal` on such a close only when the request's
 * body arrived in the same read as its head (a body of up to a few hundred bytes): for a body
 * read as a stream it stops watching the socket until the response is written (`ext/http`,
 * `wait_raw_response_ready` polls for the peer's close only when there is no request body). A
 * client that leaves a non-streamed call with a larger body would go unnoticed until the
 * upstream answered or its deadline passed. The kernel knows, though: a connection whose peer
 * has closed it is in state CLOSE_WAIT in the TCP table. While requests are watched, that table
 * is read a few times a second and the watched requests whose connection is closing are told.
 * Where the table cannot be read (not Linux, no permission) watching is a no-op.
 */
import { ipv4Bytes, ipv6Bytes } from "./ip.ts";

/** How the TCP tables are read; each call returns the text of every table (IPv4 and IPv6). */
export type ReadTcpTables = () => Promise<string[]>;

/** Reads Linux's `/proc/net/tcp` and `/proc/net/tcp6`. */
export async function readProcTcpTables(): Promise<string[]> {
  const tables = await Promise.all(
    ["/proc/net/tcp", "/proc/net/tcp6"].map((path) => Deno.readTextFile(path).catch(() => null)),
  );
  const found = tables.filter((t): t is string => t !== null);
  if (found.length === 0) throw new Error("no TCP table under /proc/net");
  return found;
}

/** Options for {@link DisconnectWatch}. */
export interface DisconnectWatchOptions {
  readTables?: ReadTcpTables;
  /** Milliseconds between reads of the tables while anything is watched. */
  intervalMs?: number;
  /** Called once if the tables cannot be read (watching then stops for good). */
  onUnavailable?: (error: unknown) => void;
}

/** The TCP state number of CLOSE_WAIT in `/proc/net/tcp`. */
const CLOSE_WAIT = "08";

/** Watches client connections for the peer's close (see the module comment). */
export class DisconnectWatch {
  readonly #readTables: ReadTcpTables;
  readonly #intervalMs: number;
  readonly #onUnavailable: (error: unknown) => void;
  /** Watched connections by their remote address as the TCP table writes it. */
  readonly #watched = new Map<string, Set<() => void>>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #available = true;

  constructor(options: DisconnectWatchOptions = {}) {
    this.#readTables = options.readTables ?? readProcTcpTables;
    this.#intervalMs = options.intervalMs ?? 250;
    this.#onUnavailable = options.onUnavailable ?? (() => {});
  }

  /**
   * Calls `onClose` (at most once) if the client at `remote` closes its connection before the
   * returned function is called.
   */
  watch(remote: Deno.Addr | undefined, onClose: () => void): () => void {
    if (!this.#available || !remote || remote.transport !== "tcp") return () => {};
    const keys = tableKeys(remote.hostname, remote.port);
    if (keys.length === 0) return () => {};
    let done = false;
    const unwatch = () => {
      done = true;
      for (const key of keys) {
        const set = this.#watched.get(key);
        if (!set) continue;
        set.delete(closed);
        if (set.size === 0) this.#watched.delete(key);
      }
    };
    const closed = () => {
      if (done) return;
      unwatch();
      onClose();
    };
    for (const key of keys) {
      let set = this.#watched.get(key);
      if (!set) this.#watched.set(key, set = new Set());
      set.add(closed);
    }
    this.#schedule();
    return unwatch;
  }

  /** Stops the timer (the app is closing). */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#watched.clear();
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#watched.size === 0) return;
    this.#timer = setTimeout(() => this.#poll(), this.#intervalMs);
  }

  async #poll(): Promise<void> {
    let tables: string[];
    try {
      tables = await this.#readTables();
    } catch (e) {
      this.#available = false;
      this.#timer = undefined;
      this.#watched.clear();
      this.#onUnavailable(e);
      return;
    }
    this.#timer = undefined;
    for (const key of closingPeers(tables)) {
      const set = this.#watched.get(key);
      if (set) { for (const closed of [...set]) closed(); }
    }
    this.#schedule();
  }
}

/** The remote addresses (`ADDR:PORT` in the table's hex) of connections in CLOSE_WAIT. */
export function closingPeers(tables: readonly string[]): string[] {
  const out: string[] = [];
  for (const table of tables) {
    // Rows: "  sl  local_address rem_address   st …"; the header row has no colon-ended "sl".
    for (const line of table.split("\n")) {
      const fields = line.trim().split(/ +/, 4);
      if (fields.length === 4 && fields[3] === CLOSE_WAIT) out.push(fields[2]!);
    }
  }
  return out;
}

/**
 * The keys under which the TCP tables write the remote address `hostname:port`: IPv4 as one
 * little-endian 32-bit word, IPv6 as four; an IPv4 client of a dual-stack socket appears in
 * the IPv6 table as `::ffff:a.b.c.d`, so IPv4 gets both keys. Empty for a hostname that is no IP.
 */
export function tableKeys(hostname: string, port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const v4 = ipv4Bytes(hostname);
  if (v4) {
    const mapped = [...new Array<number>(10).fill(0), 0xff, 0xff, ...v4];
    return [`${words(v4)}:${hexPort}`, `${words(mapped)}:${hexPort}`];
  }
  const v6 = ipv6Bytes(hostname);
  return v6 ? [`${words(v6)}:${hexPort}`] : [];
}

/** Bytes as the table writes them: each 4-byte word little-endian, in upper-case hex. */
function words(bytes: readonly number[]): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 4) {
    for (let j = 3; j >= 0; j--) out += bytes[i + j]!.toString(16).toUpperCase().padStart(2, "0");
  }
  return out;
}
