import type { Access, EmbeddingsConfig, ModelConfig, RouteConfig } from "../config/types.ts";
import type { Model } from "../types/openai.ts";

/** A catalogue entry as stored in KV: the model's config plus its registration time. */
export interface ModelRecord
  extends Omit<ModelConfig, "created" | "default_max_tokens" | "embeddings"> {
  created: number;
  /** The config's `embeddings`; absent from records stored before the field existed (read as
   * `null`). */
  embeddings?: EmbeddingsConfig | null;
  /** The config's `default_max_tokens`; absent from records stored before the field existed
   * (read as `null`). */
  default_max_tokens?: number | null;
  /** Where the record came from: seeded from the config file, put through the admin API, or
   * (never stored in KV) found in an upstream's model list by this process (discovery.ts). */
  source: "config" | "admin" | "discovery";
  /** For a config-owned record: the fingerprint of the config entry it was seeded from, so a
   * changed entry updates it (absent on records stored before seeding tracked it). */
  config_hash?: string;
}

/** A model's routes: its `routes`, or its one provider as the only route. */
export function routesOf(record: ModelRecord): RouteConfig[] {
  return record.routes ??
    [{ provider: record.provider, upstream_model: record.upstream_model, weight: 1, priority: 0 }];
}

/** The public model object (spec §2.1) for a record. */
export function toApiModel(record: ModelRecord): Model {
  const model: Model = {
    id: record.id,
    object: "model",
    created: record.created,
    owned_by: record.owned_by,
    chat_completions: record.chat_completions,
    moderation: record.moderation,
    image_input: record.image_input,
    function_calling: record.function_calling,
    embeddings: Boolean(record.embeddings),
    rerank: Boolean(record.rerank),
    featured: record.featured,
    labels: record.labels,
    access: record.access,
  };
  if (record.context_length !== null) model.context_length = record.context_length;
  if (record.default_moderation) model.default_moderation = true;
  if (record.image_generation) model.image_generation = { ...record.image_generation };
  if (record.embeddings?.dimensions) model.embedding_dimensions = record.embeddings.dimensions;
  return model;
}

/** Who is asking: what a caller is allowed to see and use. */
export interface Viewer {
  /** `null` for anonymous callers. */
  keyId: string | null;
  /** Whether the key is granted preview models. */
  preview: boolean;
  /** The key's allowed model ids or `*` globs; `null` allows all. */
  models: readonly string[] | null;
}

/** The anonymous viewer. */
export const ANONYMOUS_VIEWER: Viewer = { keyId: null, preview: false, models: null };

/** Whether an access level lets this viewer use a model at all (ignoring allow-lists). */
export function accessAllows(access: Access, viewer: Viewer): boolean {
  if (access === "public") return true;
  if (viewer.keyId === null) return false;
  return access === "key" || viewer.preview;
}

/** Whether a model id matches an allow-list of ids and `*` globs. */
export function allowListMatches(patterns: readonly string[] | null, id: string): boolean {
  return patterns === null || patterns.some((pattern) => globMatches(pattern, id));
}

/**
 * Whether `id` matches a glob in which `*` stands for any characters and every other character
 * for itself. Linear in the glob and the id (a RegExp's backtracking hung on "*a*a...*b"): the
 * pieces between stars are searched for in order, each from where the one before ended, and
 * taken at their leftmost place. `counter`, if given, counts the characters compared or passed.
 */
export function globMatches(
  glob: string,
  id: string,
  counter: { steps: number } = { steps: 0 },
): boolean {
  const pieces = glob.split("*");
  counter.steps += glob.length;
  if (pieces.length === 1) return glob === id;
  const head = pieces[0]!;
  const tail = pieces[pieces.length - 1]!;
  const stop = id.length - tail.length; // where the tail must start
  if (stop < head.length || !id.startsWith(head) || !id.endsWith(tail)) return false;
  let at = head.length;
  for (const piece of pieces.slice(1, -1)) {
    const found = id.indexOf(piece, at);
    counter.steps += (found === -1 ? id.length : found + piece.length) - at;
    if (found === -1 || found + piece.length > stop) return false;
    at = found + piece.length;
  }
  return true;
}

/** The patterns of a key's allow-list that match none of `ids` (a typo like `sim-chatt`
 * makes a key that can use nothing); none for `null`, which allows every model. */
export function unmatchedPatterns(
  patterns: readonly string[] | null,
  ids: readonly string[],
): string[] {
  if (patterns === null) return [];
  return patterns.filter((pattern) => !ids.some((id) => globMatches(pattern, id)));
}

/** A warning line for each pattern of {@link unmatchedPatterns}. */
export function unmatchedWarnings(patterns: readonly string[]): string[] {
  return patterns.map((pattern) =>
    `models: ${JSON.stringify(pattern)} matches no model in the catalogue`
  );
}
