/**
 * Kept-alive connections per origin. An idle connection keeps a read pending, so a server that
 * closes it (or sends anything while nothing was asked) is noticed at once and the connection
 * dropped, instead of failing the next request that takes it.
 */
import { Http1Connection } from "./connection.ts";

/** Where requests go: scheme, host and port. */
export interface Origin {
  /** `https://api.openai.com:443`. */
  key: string;
  hostname: string;
  port: number;
  tls: boolean;
  /** The Host header's value (the port only when it is not the scheme's default). */
  host: string;
}

/** Opens a socket to an origin; rejects once `signal` fires. */
export type Connector = (origin: Origin, signal: AbortSignal) => Promise<Deno.Conn>;

/** The idle connections of each origin, most recently used first out. */
export class ConnectionPool {
  readonly #connect: Connector;
  readonly #maxIdle: number;
  readonly #idle = new Map<string, Http1Connection[]>();
  #closed = false;

  constructor(connect: Connector, maxIdlePerOrigin: number) {
    this.#connect = connect;
    this.#maxIdle = maxIdlePerOrigin;
  }

  /** An idle connection to `origin` (unless `fresh` asks for a new one), or a new one. */
  async acquire(origin: Origin, signal: AbortSignal, fresh = false): Promise<Http1Connection> {
    const idle = fresh ? undefined : this.#idle.get(origin.key);
    while (idle !== undefined && idle.length > 0) {
      const connection = idle.pop()!;
      if (connection.closed) continue;
      connection.keepAlive(true);
      return connection;
    }
    return new Http1Connection(await this.#connect(origin, signal));
  }

  /** Takes back a connection whose last answer was read to its end. */
  release(origin: Origin, connection: Http1Connection): void {
    if (this.#closed || connection.closed) return connection.close();
    let idle = this.#idle.get(origin.key);
    if (idle === undefined) this.#idle.set(origin.key, idle = []);
    if (idle.length >= this.#maxIdle) return connection.close();
    idle.push(connection);
    // An idle connection must not keep the process alive (shutdown waits for nothing).
    connection.keepAlive(false);
    const dropped = () => {
      const list = this.#idle.get(origin.key);
      const at = list?.indexOf(connection) ?? -1;
      // Taken again before this read came back: the new request owns what it brought.
      if (at < 0) return;
      list!.splice(at, 1);
      connection.close();
    };
    connection.reader.watch().then(dropped, dropped);
  }

  /** Closes every idle connection; later releases close theirs. */
  close(): void {
    this.#closed = true;
    for (const idle of this.#idle.values()) {
      for (const connection of idle) connection.close();
    }
    this.#idle.clear();
  }
}
