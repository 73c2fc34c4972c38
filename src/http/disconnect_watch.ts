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
import { EntryList, type ListEntry } from "../entry_list.ts";
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

/** A watched request: its client's address, since when, and whom to tell. */
interface Watched {
  hostname: string;
  port: number;
  since: number;
  onClose: () => void;
  /** Its place in the watch list. */
  listed: ListEntry<Watched> | null;
}

/**
 * Watches client connections for the peer's close (see the module comment). Watching costs a
 * request one set insertion (the table's keys are worked out only for requests still running
 * at a read), and the table is read only while a watched request is older than the interval:
 * under a load of quick requests it is never read. (A combined `AbortSignal.any` and keys per
 * request cost ~12 µs of CPU a request in `bench/handler_bench.ts`.)
 */
export class DisconnectWatch {
  readonly #readTables: ReadTcpTables;
  readonly #intervalMs: number;
  readonly #onUnavailable: (error: unknown) => void;
  /** In the order they started, so the oldest comes first. */
  readonly #watched = new EntryList<Watched>();
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
    if (!this.#available || !remote || remote.transport !== "tcp") return noop;
    const entry: Watched = {
      hostname: remote.hostname,
      port: remote.port,
      since: performance.now(),
      onClose,
      listed: null,
    };
    const listed = this.#watched.add(entry);
    entry.listed = listed;
    this.#schedule();
    return () => void this.#watched.delete(listed);
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
    const cutoff = performance.now() - this.#intervalMs;
    const oldest = this.#watched.first();
    if (oldest === undefined || oldest.since > cutoff) {
      this.#timer = undefined;
      this.#schedule();
      return;
    }
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
    const closing = new Set(closingPeers(tables));
    if (closing.size > 0) {
      for (const entry of this.#watched.values()) {
        if (entry.since > cutoff) break;
        if (tableKeys(entry.hostname, entry.port).some((key) => closing.has(key))) {
          this.#watched.delete(entry.listed!);
          entry.onClose();
        }
      }
    }
    this.#schedule();
  }
}

function noop(): void {}

/** A row of a TCP table in state CLOSE_WAIT ("   12: LOCAL:PORT REMOTE:PORT 08 ..."): the
 * remote address. Only such rows are matched, so a large table costs one native scan. */
const CLOSE_WAIT_ROW = /^ *\d+: [0-9A-F]+:[0-9A-F]+ ([0-9A-F]+:[0-9A-F]+) 08 /gm;

/** The remote addresses (`ADDR:PORT` in the table's hex) of connections in CLOSE_WAIT. */
export function closingPeers(tables: readonly string[]): string[] {
  const out: string[] = [];
  for (const table of tables) {
    for (const match of table.matchAll(CLOSE_WAIT_ROW)) out.push(match[1]!);
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
