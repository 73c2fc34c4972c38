/**
 * The semantic cache's index (docs/caching.md#semantic-cache): for each stored answer whose
 * question ends with a user turn, the embedding of that turn's text, under the question's scope
 * and its conversation prefix (everything but that turn: model, earlier messages, options), so a
 * question is only ever matched with one asked in the same scope, after the same conversation,
 * with the same options. A match is the nearest stored embedding at or above the threshold.
 */
import type { CanonicalRequest } from "../canonical/conversation.ts";
import { vectorFromBase64 } from "../providers/embedding_encoding.ts";
import type { CallContext, ProviderLookup } from "../providers/types.ts";
import type { Catalogue } from "../catalogue/store.ts";
import { cacheKey } from "./key.ts";

const PREFIX = "cache_semantic";

/** A question as the semantic cache sees it. */
export interface SemanticQuestion {
  /** The cache key of its conversation prefix. */
  prefix: string;
  /** The text of its last (user) turn. */
  text: string;
}

/** The question's last user turn and prefix, or `null` when it does not end with a user turn of
 * text alone (a tool result, an image: agent traffic is matched exactly only). */
export function semanticQuestion(req: CanonicalRequest): SemanticQuestion | null {
  const last = req.messages.at(-1);
  if (last === undefined || last.role !== "user" || last.parts.length === 0) return null;
  const texts: string[] = [];
  for (const part of last.parts) {
    if (part.type !== "text") return null;
    texts.push(part.text);
  }
  const prefix = cacheKey({ ...req, messages: req.messages.slice(0, -1) });
  return { prefix, text: texts.join("\n") };
}

/** One indexed question, as stored. */
interface Indexed {
  /** Its embedding, normalised, as float32 bytes. */
  vector: Uint8Array;
  /** Clock ms from which it is stale. */
  expires: number;
}

/** The index of stored questions' embeddings in KV. */
export class SemanticIndex {
  constructor(readonly kv: Deno.Kv) {}

  /** The exact cache key of the stored question nearest to `vector` (normalised) among the
   * first `max` of `scope` and `prefix`, if its cosine similarity is at least `threshold`. */
  async nearest(
    scope: string,
    prefix: string,
    vector: Float32Array,
    { threshold, max, now }: { threshold: number; max: number; now: number },
  ): Promise<{ key: string; similarity: number } | null> {
    let best: { key: string; similarity: number } | null = null;
    const entries = this.kv.list<Indexed>({ prefix: [PREFIX, scope, prefix] }, { limit: max });
    for await (const entry of entries) {
      const { vector: bytes, expires } = entry.value;
      if (expires <= now || !(bytes instanceof Uint8Array)) continue;
      const stored = asFloats(bytes);
      if (stored.length !== vector.length) continue;
      let dot = 0;
      for (let i = 0; i < vector.length; i++) dot += vector[i]! * stored[i]!;
      if (dot >= threshold && (best === null || dot > best.similarity)) {
        best = { key: String(entry.key.at(-1)), similarity: dot };
      }
    }
    return best;
  }

  /** Indexes the question stored under `key`, until `now + ttlMs`. */
  async add(
    scope: string,
    prefix: string,
    key: string,
    vector: Float32Array,
    { now, ttlMs }: { now: number; ttlMs: number },
  ): Promise<void> {
    const bytes = new Uint8Array(vector.buffer.slice(0));
    const value: Indexed = { vector: bytes, expires: now + ttlMs };
    await this.kv.set([PREFIX, scope, prefix, key], value, { expireIn: ttlMs });
  }
}

/** What embeds a question's text for the semantic cache. */
export interface Embedder {
  /** The normalised embedding of `text` by the catalogue's model `model`, or `null` when the
   * model is gone or cannot embed (then the call is cached exactly only). Throws when the
   * embedding call fails. */
  embed(model: string, text: string, signal: AbortSignal, requestId: string): Promise<
    Float32Array | null
  >;
}

/** An {@link Embedder} over the catalogue's models and their providers (the operator's model:
 * the caller's permissions do not apply, and its tokens are not the caller's). */
export function catalogueEmbedder(catalogue: Catalogue, providers: ProviderLookup): Embedder {
  return {
    async embed(model, text, signal, requestId) {
      const record = catalogue.get(model);
      if (record === undefined || !record.enabled || !record.embeddings) return null;
      const provider = providers.get(record.provider);
      if (provider?.embed === undefined) return null;
      const call: CallContext = {
        signal,
        requestId,
        upstreamModel: record.upstream_model,
        model: record,
        dropped: new Set(),
      };
      const result = await provider.embed({
        model: record.id,
        input: [text],
        encoding_format: "base64",
        dimensions: null,
        user: null,
        task_type: null,
      }, call);
      const first = "answer" in result ? firstFromAnswer(result.answer) : result.embeddings[0];
      const values = typeof first === "string" ? vectorFromBase64(first) : first;
      return values ? normalised(values) : null;
    },
  };
}

/** The first vector of an embeddings answer passed on whole (OpenAI's JSON). */
function firstFromAnswer(parts: readonly Uint8Array[]): number[] | string | undefined {
  const decoder = new TextDecoder();
  const text = parts.map((part) => decoder.decode(part, { stream: true })).join("") +
    decoder.decode();
  const body = JSON.parse(text) as { data?: { embedding?: number[] | string }[] };
  return body.data?.[0]?.embedding;
}

/** `values` scaled to length 1, as float32. */
function normalised(values: readonly number[]): Float32Array | null {
  let norm = 0;
  for (const v of values) norm += v * v;
  if (!(norm > 0)) return null;
  const scale = 1 / Math.sqrt(norm);
  return Float32Array.from(values, (v) => v * scale);
}

/** The float32 values of stored bytes. */
function asFloats(bytes: Uint8Array): Float32Array {
  const copy = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
  return new Float32Array(copy.buffer, copy.byteOffset, copy.byteLength / 4);
}
