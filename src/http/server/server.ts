/**
 * Switchyard's HTTP/1.1 server: `Deno.listen` and a connection each (`connection.ts`), serving
 * a `(Request, info) => Response` handler as `Deno.serve` does. It exists because Deno's server
 * cannot tell a handler that a client left after sending a body of more than ~1 KB (see
 * `connection.ts`), and reading the kernel's TCP table instead needs `--allow-all`. It speaks
 * HTTP/1.1 and 1.0 over plain TCP; TLS and HTTP/2 belong to the reverse proxy in front.
 */
import { Expiries } from "../expiries.ts";
import { type ConnectionContext, type Handler, HttpConnection } from "./connection.ts";
import { DateField } from "./response_head.ts";

/** Options for {@link serveHttp}. */
export interface ServeHttpOptions {
  hostname: string;
  /** 0 for any free port. */
  port: number;
  /** Let other processes listen on the same port (SO_REUSEPORT: Linux spreads connections
   * among them). Needs `--unstable-net` (deno.json's `unstable` has it). */
  reusePort?: boolean;
  /** A handler that threw, or a response body that failed (default: `console.error`). */
  onError?: (error: unknown) => void;
  /** How long a request head may take once its first byte came (default 30 s). */
  headTimeoutMs?: number;
  /** How long a connection may wait between requests (default 75 s). */
  idleTimeoutMs?: number;
  /** How long a response write may wait for a client that reads nothing (default 60 s). */
  sendTimeoutMs?: number;
}

/** A running server. */
export interface HttpServer {
  /** The address it listens on. */
  readonly addr: Deno.NetAddr;
  /** Settles once the server has stopped and every connection has ended. */
  readonly finished: Promise<void>;
  /** Stops accepting connections, closes idle ones, lets requests in flight finish (each
   * connection closes after its response), and settles once all have. */
  shutdown(): Promise<void>;
}

/** Listens on `options.hostname:port` and serves `handler`. Throws as `Deno.listen` does
 * (`AddrInUse`, `NotCapable`). */
export function serveHttp(options: ServeHttpOptions, handler: Handler): HttpServer {
  const listener = Deno.listen({
    hostname: options.hostname,
    port: options.port,
    ...(options.reusePort ? { reusePort: true } : {}),
  } as Deno.TcpListenOptions);
  const addr = listener.addr as Deno.NetAddr;
  const connections = new Set<HttpConnection>();
  const finished = Promise.withResolvers<void>();
  let draining = false;
  let accepting: Promise<void> = Promise.resolve();
  const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const ctx: ConnectionContext = {
    handler,
    origin: `http://${host}:${addr.port}`,
    timers: new Expiries(250),
    date: new DateField(),
    headTimeoutMs: options.headTimeoutMs ?? 30_000,
    idleTimeoutMs: options.idleTimeoutMs ?? 75_000,
    sendTimeoutMs: options.sendTimeoutMs ?? 60_000,
    onError,
    draining: () => draining,
  };
  const settle = () => {
    if (draining && connections.size === 0) accepting.then(() => finished.resolve());
  };

  accepting = (async () => {
    for (;;) {
      let conn: Deno.TcpConn;
      try {
        conn = await listener.accept() as Deno.TcpConn;
      } catch (e) {
        if (draining || e instanceof Deno.errors.BadResource) return;
        // Out of file descriptors and the like: wait a moment rather than spin.
        onError(e);
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      if (draining) {
        conn.close();
        continue;
      }
      try {
        conn.setNoDelay(true);
      } catch {
        // Closed already.
      }
      const connection = new HttpConnection(conn, ctx);
      connections.add(connection);
      connection.serve().finally(() => {
        connections.delete(connection);
        settle();
      });
    }
  })();

  return {
    addr,
    finished: finished.promise,
    shutdown(): Promise<void> {
      if (!draining) {
        draining = true;
        try {
          listener.close();
        } catch {
          // Closed already.
        }
        for (const connection of connections) connection.closeIfIdle();
        settle();
      }
      return finished.promise;
    },
  };
}
