/**
 * The exact response cache as a model step (docs/caching.md): a call of a model with a `cache`
 * is answered from the entry its canonical request keys (no upstream call; a stream replayed
 * as events, which every front door renders in its protocol), or called through, its answer
 * stored once it ended complete (a stream's events gathered as they pass, stored after its
 * finish). Every answer says which in `x-switchyard-cache`.
 */
import type { CanonicalRequest } from "../canonical/conversation.ts";
import type { CanonicalEvent } from "../canonical/events.ts";
import type { CanonicalResult } from "../canonical/result.ts";
import { ResultCollector } from "../canonical/result_collector.ts";
import type { Clock } from "../clock.ts";
import type { CacheConfig } from "../config/types.ts";
import { ApiError } from "../errors.ts";
import type { Logger } from "../log/logger.ts";
import type { RequestContext } from "../pipeline/context.ts";
import type { ModelStep } from "../pipeline/model_step.ts";
import type { CallContext, Provider } from "../providers/types.ts";
import { cacheKey } from "./key.ts";
import { type CachePlan, planCache } from "./plan.ts";
import { replayEvents } from "./replay.ts";
import {
  catalogueEmbedder,
  SemanticIndex,
  type SemanticQuestion,
  semanticQuestion,
} from "./semantic.ts";
import { CacheStore } from "./store.ts";

/** The response header that says whether the cache answered. */
export const CACHE_HEADER = "x-switchyard-cache";

/** What the cache step is built from. */
export interface ResponseCacheDeps {
  kv: Deno.Kv;
  clock: Clock;
  logger: Logger;
}

/** The response cache step (see the module comment). */
export function responseCache(deps: ResponseCacheDeps): ModelStep {
  const store = new CacheStore(deps.kv);
  const semantic = new SemanticIndex(deps.kv);
  return {
    around(provider, ctx, record, kind) {
      const config = record.cache;
      // Only answers are cached: a count or embeddings call goes on as it would without.
      if (config === undefined || kind !== "chat") return null;
      const plan = planCache(config, ctx.principal, ctx.request.headers);
      setHeader(ctx, "miss");
      if (plan === null) {
        ctx.cache = "bypass";
        return null;
      }
      ctx.cache = "miss";
      return new CachedCall({ ...deps, store, semantic }, provider, ctx, config, plan);
    },
  };
}

/** The stores a cached call uses. */
interface Stores extends ResponseCacheDeps {
  store: CacheStore;
  semantic: SemanticIndex;
}

/** A question's place in the semantic index, once its embedding is known. */
interface Embedded {
  question: SemanticQuestion;
  vector: Float32Array;
}

/** One call through the cache: the adapter it wraps, with the call's plan. */
class CachedCall implements Provider {
  readonly id: string;
  readonly #deps: Stores;
  readonly #provider: Provider;
  readonly #ctx: RequestContext;
  readonly #config: CacheConfig;
  readonly #plan: CachePlan;

  /** The question's embedding, once made (`null`: none to make, or it failed). */
  #embedded: Promise<Embedded | null> | undefined;

  constructor(
    deps: Stores,
    provider: Provider,
    ctx: RequestContext,
    config: CacheConfig,
    plan: CachePlan,
  ) {
    this.id = provider.id;
    this.#deps = deps;
    this.#provider = provider;
    this.#ctx = ctx;
    this.#config = config;
    this.#plan = plan;
  }

  async chat(req: CanonicalRequest, call: CallContext): Promise<CanonicalResult> {
    const key = cacheKey(req);
    const question = this.#question(req);
    const hit = await this.#lookup(key, question);
    if (hit !== null) return hit;
    const result = await this.#provider.chat(req, call);
    await this.#store(key, result, question);
    return result;
  }

  chatStream(req: CanonicalRequest, call: CallContext): AsyncIterable<CanonicalEvent[]> {
    const key = cacheKey(req);
    return this.#stream(key, this.#question(req), () => this.#provider.chatStream(req, call));
  }

  /** The stream of a call: replayed from the cache, or `start`ed upstream and gathered as it
   * passes (up to the largest entry stored). `start` is let go of once called, and with it the
   * prompt, which a stream need not keep (tests/perf/stream_prompt_test.ts). */
  async *#stream(
    key: string,
    question: SemanticQuestion | null,
    start: (() => AsyncIterable<CanonicalEvent[]>) | null,
  ): AsyncIterable<CanonicalEvent[]> {
    const hit = await this.#lookup(key, question);
    if (hit !== null) {
      start = null;
      yield* replayEvents(hit);
      return;
    }
    const upstream = start!();
    start = null;
    let collector: ResultCollector | null = new ResultCollector();
    let chars = 0;
    for await (const batch of upstream) {
      if (collector !== null) {
        collector.add(batch);
        chars += contentChars(batch);
        if (chars > this.#config.max_entry_bytes) collector = null;
      }
      yield batch;
    }
    // Only a stream that finished gets here: a cut one threw, a client that left stopped it.
    if (collector === null || collector.finish === null || collector.usage === null) return;
    const result: CanonicalResult = {
      parts: collector.parts,
      finish: collector.finish,
      usage: collector.usage,
    };
    if (collector.detail !== undefined) result.stopDetail = collector.detail;
    if (collector.extras !== undefined) result.extras = collector.extras;
    await this.#store(key, result, question);
  }

  /** The question as the semantic cache sees it, when the model's cache has one. */
  #question(req: CanonicalRequest): SemanticQuestion | null {
    return this.#config.semantic === null ? null : semanticQuestion(req);
  }

  /** The stored answer for `key` (or, with a semantic cache, for the nearest question like
   * `req`), when the plan looks and there is one: then the call is a hit. A store that fails is
   * a miss. */
  async #lookup(
    key: string,
    question: SemanticQuestion | null,
  ): Promise<CanonicalResult | null> {
    if (!this.#plan.lookup) return null;
    const { store, semantic, clock, logger } = this.#deps;
    const ctx = this.#ctx;
    const { scope } = this.#plan;
    let result: CanonicalResult | null;
    try {
      const bytes = await store.get(scope, key, clock.now());
      result = bytes === null ? null : decodeResult(bytes);
      const settings = this.#config.semantic;
      if (result === null && settings !== null) {
        const embedded = await this.#embed(question);
        const near = embedded &&
          await semantic.nearest(scope, embedded.question.prefix, embedded.vector, {
            threshold: settings.threshold,
            max: settings.max_candidates,
            now: clock.now(),
          });
        const found = near ? await store.get(scope, near.key, clock.now()) : null;
        result = found === null ? null : decodeResult(found);
      }
    } catch (e) {
      logger.error("could not read the response cache", e, ctx.requestId);
      return null;
    }
    if (result === null) return null;
    ctx.cache = "hit";
    setHeader(ctx, "hit");
    if (!this.#config.charge_hits) ctx.charged = false;
    return result;
  }

  /** Stores a complete answer (not an error, nor a refusal unless the cache keeps them, nor
   * one over `max_entry_bytes`); a store that fails is logged, and the answer goes on. */
  async #store(
    key: string,
    result: CanonicalResult,
    question: SemanticQuestion | null,
  ): Promise<void> {
    const config = this.#config;
    if (!storable(result, config.store_refusals)) return;
    const { id: _, ...kept } = result;
    const bytes = new TextEncoder().encode(JSON.stringify(kept));
    if (bytes.length > config.max_entry_bytes) return;
    const { store, semantic, clock, logger } = this.#deps;
    const { scope, ttlMs } = this.#plan;
    try {
      await store.put(scope, key, bytes, { now: clock.now(), ttlMs });
      const embedded = await this.#embed(question);
      if (embedded !== null) {
        const { prefix } = embedded.question;
        await semantic.add(scope, prefix, key, embedded.vector, { now: clock.now(), ttlMs });
      }
    } catch (e) {
      logger.error("could not write the response cache", e, this.#ctx.requestId);
    }
  }

  /** The embedding of the question's last user turn by the semantic cache's model, made once
   * per call; `null` without a question, or when the embedding failed (logged). */
  #embed(question: SemanticQuestion | null): Promise<Embedded | null> {
    this.#embedded ??= (async () => {
      const settings = this.#config.semantic;
      if (question === null || settings === null) return null;
      const ctx = this.#ctx;
      const { catalogue, providers } = ctx.services;
      try {
        const vector = await catalogueEmbedder(catalogue, providers)
          .embed(settings.model, question.text, ctx.signal, ctx.requestId);
        return vector === null ? null : { question, vector };
      } catch (e) {
        // The error's code only: an upstream's message may quote the question.
        const code = e instanceof ApiError ? e.code ?? e.type : "internal_error";
        this.#deps.logger.warn(
          `${ctx.requestId}: the semantic cache could not embed the question with ${settings.model} (${code})`,
        );
        return null;
      }
    })();
    return this.#embedded;
  }
}

/** Sets `x-switchyard-cache` on the answer. */
function setHeader(ctx: RequestContext, value: "hit" | "miss"): void {
  ctx.responseHeaders ??= {};
  ctx.responseHeaders[CACHE_HEADER] = value;
}

/** Whether an answer may be stored: it ended well (not `error`), and is no refusal unless
 * `refusals`. */
function storable(result: CanonicalResult, refusals: boolean): boolean {
  if (result.finish === "error") return false;
  if (refusals) return true;
  return result.finish !== "content_filter" && !result.parts.some((p) => p.type === "refusal");
}

/** Characters of content in a batch (text, arguments, signatures). */
function contentChars(batch: readonly CanonicalEvent[]): number {
  let n = 0;
  for (const event of batch) {
    if (event.type !== "block_delta") continue;
    const d = event.delta;
    n += d.type === "arguments"
      ? d.json.length
      : d.type === "signature"
      ? d.signature.length
      : d.text.length;
  }
  return n;
}

/** A stored answer, or `null` when the bytes are not one (an entry of another version). */
function decodeResult(bytes: Uint8Array): CanonicalResult | null {
  const value = JSON.parse(new TextDecoder().decode(bytes)) as Partial<CanonicalResult> | null;
  if (
    value === null || typeof value !== "object" || !Array.isArray(value.parts) ||
    typeof value.finish !== "string" || typeof value.usage !== "object" || value.usage === null
  ) return null;
  return value as CanonicalResult;
}
