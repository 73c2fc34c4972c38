/** Request contexts and settle hooks for tests of the pipeline's steps. */
import { CapturedOutput, FakeClock } from "./server.ts";
import { Logger } from "../../src/log/logger.ts";
import type { Usage } from "../../src/canonical/result.ts";
import {
  type Endpoint,
  RequestContext,
  type Services,
  type SettleRunner,
} from "../../src/pipeline/context.ts";
import { type Settlement, Settler } from "../../src/pipeline/settle.ts";
import { KeyStore } from "../../src/auth/keys.ts";
import { KvHealth } from "../../src/kv/health.ts";
import { StoreGuard } from "../../src/pipeline/store_guard.ts";
import type { Next } from "../../src/pipeline/compose.ts";

/** The connection address tests' requests come from. */
export const REMOTE: Deno.NetAddr = { transport: "tcp", hostname: "127.0.0.1", port: 40000 };

/** A runner that settles nothing. */
const IGNORE: SettleRunner = { run() {} };

/** An endpoint answering 200 "ok", with the given fields. */
export function endpoint(fields: Partial<Endpoint> = {}): Endpoint {
  return { handler: () => new Response("ok"), scope: null, auth: "none", json: false, ...fields };
}

/** A context for `request` (a GET of `/` by default). Its services are whatever the test
 * gives: the steps get theirs passed in. */
export function testContext(
  request: Request = new Request("http://localhost/"),
  options: { settle?: SettleRunner; services?: Partial<Services>; endpoint?: Endpoint } = {},
): RequestContext {
  const ctx = new RequestContext(
    request,
    REMOTE,
    "127.0.0.1",
    Date.UTC(2026, 0, 15, 12),
    (options.services ?? {}) as Services,
    options.settle ?? IGNORE,
  );
  if (options.endpoint) ctx.endpoint = options.endpoint;
  return ctx;
}

/** One settlement as a hook saw it. */
export interface Settled {
  requestId: string;
  status: number;
  error: string | null;
  usage: Usage | null;
}

/** A {@link Settler} with one hook that records what it sees, and the logger it reports
 * failing hooks to. */
export function recordingSettler(): {
  settler: Settler;
  settled: Settled[];
  /** The whole settlements, in the same order. */
  settlements: Settlement[];
  logger: Logger;
  output: CapturedOutput;
} {
  const settled: Settled[] = [];
  const settlements: Settlement[] = [];
  const output = new CapturedOutput();
  const logger = new Logger({ clock: new FakeClock(), output, flushMs: 0 });
  const hook = (ctx: RequestContext, settlement: Settlement) => {
    const { status, error, usage } = settlement;
    settled.push({ requestId: ctx.requestId, status, error, usage });
    settlements.push(settlement);
  };
  return { settler: new Settler([hook], logger), settled, settlements, logger, output };
}

/** What the steps that use KV are built over: a fresh in-memory store, its health and guard,
 * and a way to break it (close the KV, so that its next operation fails). */
export async function storeFixture() {
  const kv = await Deno.openKv(":memory:");
  const clock = new FakeClock();
  const keys = new KeyStore(kv, clock);
  const health = new KvHealth({ kv, clock, path: null });
  const output = new CapturedOutput();
  const store = new StoreGuard(health, new Logger({ clock, output }));
  let open = true;
  return {
    kv,
    clock,
    keys,
    health,
    output,
    store,
    breakStore: () => {
      open = false;
      kv.close();
    },
    [Symbol.dispose]: () => open && kv.close(),
  };
}

/** Runs a composed pipeline on `ctx`: its response, or what it threw. */
export async function answerOf(
  run: Next<RequestContext>,
  ctx: RequestContext,
): Promise<{ ctx: RequestContext; answer: unknown }> {
  const answer = await Promise.resolve().then(() => run(ctx)).catch((e: unknown) => e);
  return { ctx, answer };
}
