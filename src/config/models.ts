/**
 * The `models` section: each model entry (shared with the admin API, which takes the same
 * entries) with its capabilities checked against its providers' styles, its pricing,
 * moderation thresholds and embeddings settings.
 */
import { quote } from "../quote.ts";
import { OPTIONAL, type Reader } from "../validation/reader.ts";
import { readGuardrails } from "./guardrails.ts";
import { readCache } from "./cache.ts";
import { readImageGeneration } from "./image_generation.ts";
import { readRerank } from "./rerank.ts";
import { readRoutes, unknownProvider } from "./routes.ts";
import { NULLABLE_COUNT, OPTIONAL_TEXT, readStrings, TEXT } from "./rules.ts";
import { doneWithSuggestion } from "./suggest.ts";
import {
  ACCESS_LEVELS,
  type EmbeddingsConfig,
  HOSTED_TOOL_POLICIES,
  type ModelConfig,
  MODERATION_CATEGORIES,
  type ModerationCategory,
  type Pricing,
  type ProviderConfig,
  SIMULATOR_EMBEDDING_DIMENSIONS,
  STYLE_CAPABILITIES,
} from "./types.ts";

const PRICE = { min: 0, max: 1_000_000 } as const;

/** A model's `pricing`, or `null` when it has none (free). */
function readPricing(r: Reader): Pricing | null {
  const f = r.object({ optional: true, nullable: true });
  if (f === undefined || f === null) return null;
  const pricing: Pricing = { input: f.number("input", PRICE), output: f.number("output", PRICE) };
  for (const name of ["cached_input", "cache_write"] as const) {
    const price = f.number(name, { ...PRICE, optional: true });
    if (price !== undefined) pricing[name] = price;
  }
  f.done();
  return pricing;
}

const THRESHOLD = { optional: true, min: 0, max: 1 } as const;

/** Score thresholds by moderation category; other keys are unknown parameters. */
function readThresholds(r: Reader): Partial<Record<ModerationCategory, number>> {
  const f = r.object(OPTIONAL);
  const out: Partial<Record<ModerationCategory, number>> = {};
  if (f === undefined) return out;
  for (const category of MODERATION_CATEGORIES) {
    const threshold = f.number(category, THRESHOLD);
    if (threshold !== undefined) out[category] = threshold;
  }
  f.done();
  return out;
}

/** The rule of a model id (config, admin API, discovered models). */
export const MODEL_ID = {
  pattern: /^[A-Za-z0-9][A-Za-z0-9._:\/-]{0,127}$/,
  format:
    "a model id of letters, digits and . _ : / - (at most 128, starting with a letter or digit)",
} as const;
const MODERATION_MODES = ["native", "guard"] as const;
const CAPABILITIES = [
  "chat_completions",
  "moderation",
  "image_input",
  "function_calling",
  "embeddings",
  "rerank",
] as const;

/** The fields of a model entry. */
const MODEL_FIELDS = [
  "id",
  "provider",
  "upstream_model",
  "owned_by",
  "created",
  "chat_completions",
  "moderation",
  "image_input",
  "function_calling",
  "image_generation",
  "embeddings",
  "rerank",
  "access",
  "featured",
  "labels",
  "context_length",
  "default_max_tokens",
  "default_moderation",
  "moderation_mode",
  "moderation_thresholds",
  "enabled",
  "hosted_tools",
  "guardrails",
  "cache",
] as const;

/** A model's `embeddings` object (`true` reads as `{}`: every default). */
function readEmbeddings(r: Reader, provider: ProviderConfig): EmbeddingsConfig {
  const f = r.object({ expected: "a boolean or an object" });
  const dimensions = f.integer("dimensions", { optional: true, min: 1, max: 65_536 });
  const embeddings: EmbeddingsConfig = {
    dimensions: dimensions ??
      (provider.style === "simulator" ? SIMULATOR_EMBEDDING_DIMENSIONS : null),
    custom_dimensions: f.boolean("custom_dimensions", OPTIONAL) ?? true,
    max_inputs: f.integer("max_inputs", { optional: true, min: 1, max: 100_000 }) ?? 2048,
    max_input_tokens: f.integer("max_input_tokens", { optional: true, min: 1, max: 10_000_000 }) ??
      8192,
  };
  f.done();
  return embeddings;
}

/** Validates one model entry; `providers` resolves its provider id. */
export function readModel(
  r: Reader,
  providers: ReadonlyMap<string, ProviderConfig>,
): ModelConfig {
  const f = r.object();
  const id = f.string("id", MODEL_ID);
  const routes = f.has("routes") ? readRoutes(f, providers, id) : undefined;
  const providerId = routes ? routes[0]!.provider : f.string("provider", TEXT);
  const provider = providers.get(providerId);
  if (!provider) throw unknownProvider(f.get("provider"), providerId, providers);
  const image = f.get("image_generation");
  const embeddings = f.get("embeddings");
  const model: ModelConfig = {
    id,
    provider: providerId,
    upstream_model: routes
      ? routes[0]!.upstream_model
      : f.string("upstream_model", OPTIONAL_TEXT) ?? id,
    owned_by: f.string("owned_by", OPTIONAL_TEXT) ?? providerId,
    created: f.integer("created", NULLABLE_COUNT) ?? null,
    chat_completions: f.boolean("chat_completions", OPTIONAL) ?? false,
    moderation: f.boolean("moderation", OPTIONAL) ?? false,
    image_input: f.boolean("image_input", OPTIONAL) ?? false,
    function_calling: f.boolean("function_calling", OPTIONAL) ?? false,
    image_generation: image.value === undefined || image.value === null || image.value === false
      ? null
      : readImageGeneration(image.value === true ? image.with({}) : image),
    embeddings: embeddings.value === undefined || embeddings.value === null ||
        embeddings.value === false
      ? null
      : readEmbeddings(embeddings.value === true ? embeddings.with({}) : embeddings, provider),
    access: f.oneOf("access", ACCESS_LEVELS, OPTIONAL) ?? "public",
    featured: f.boolean("featured", OPTIONAL) ?? false,
    labels: readStrings(f.get("labels")) ?? [],
    context_length: f.integer("context_length", NULLABLE_COUNT) ?? null,
    default_max_tokens: f.integer("default_max_tokens", NULLABLE_COUNT) ?? null,
    default_moderation: f.boolean("default_moderation", OPTIONAL) ?? false,
    moderation_mode: f.oneOf("moderation_mode", MODERATION_MODES, OPTIONAL) ??
      (provider.style === "anthropic" ? "guard" : "native"),
    moderation_thresholds: readThresholds(f.get("moderation_thresholds")),
    enabled: f.boolean("enabled", OPTIONAL) ?? true,
  };
  const pricing = readPricing(f.get("pricing"));
  if (pricing !== null) model.pricing = pricing;
  const hosted = f.oneOf("hosted_tools", HOSTED_TOOL_POLICIES, OPTIONAL);
  if (hosted !== undefined) model.hosted_tools = hosted;
  if (routes) model.routes = routes;
  const rerank = readRerank(f.get("rerank"));
  if (rerank) model.rerank = rerank;
  const guardrails = readGuardrails(f.get("guardrails"));
  if (guardrails) model.guardrails = guardrails;
  const cache = readCache(f.get("cache"));
  if (cache) {
    if (!model.chat_completions) {
      throw f.get("cache").invalid("only a model with chat_completions: true answers from a cache");
    }
    model.cache = cache;
  }
  const continues = f.boolean("continue_on_failure", OPTIONAL);
  if (continues !== undefined) {
    if (!routes) {
      throw f.get("continue_on_failure").invalid("only a model with routes can continue on one");
    }
    model.continue_on_failure = continues;
  }
  for (const route of routes ?? [{ provider: providerId }]) {
    const style = providers.get(route.provider)!.style;
    const can = STYLE_CAPABILITIES[style];
    for (const cap of CAPABILITIES) {
      if (model[cap] && !can.has(cap)) {
        throw f.get(cap).invalid(
          `provider "${route.provider}" (style ${style}) cannot serve ${cap}`,
        );
      }
    }
  }
  if (model.image_generation && !STYLE_CAPABILITIES[provider.style].has("image_generation")) {
    throw image.invalid(
      `provider "${providerId}" (style ${provider.style}) cannot generate images`,
    );
  }
  if (model.moderation_mode === "native" && model.moderation && provider.style === "anthropic") {
    throw f.get("moderation_mode").invalid(`style anthropic has no moderation API; use "guard"`);
  }
  if (model.default_moderation && !model.moderation) {
    throw f.get("default_moderation").invalid(
      "only a model with moderation: true can be the default",
    );
  }
  doneWithSuggestion(f, MODEL_FIELDS);
  if (
    !model.chat_completions && !model.moderation && !model.image_generation &&
    !model.embeddings && !model.rerank
  ) {
    throw r.invalid(
      `model "${id}" serves nothing: set chat_completions, moderation, image_generation, embeddings or rerank`,
    );
  }
  return model;
}

/** The `models` section (ids unique, one default moderation model at most). */
export function readModels(
  r: Reader,
  providers: ReadonlyMap<string, ProviderConfig>,
): ModelConfig[] {
  const models: ModelConfig[] = [];
  const ids = new Map<string, number>();
  let defaultModeration = -1;
  (r.array({ optional: true, nullable: true }) ?? []).forEach((item, i) => {
    const model = readModel(item, providers);
    const first = ids.get(model.id);
    if (first !== undefined) {
      throw item.child("id", model.id).invalid(
        `duplicate model id ${quote(model.id)} (also models[${first}])`,
      );
    }
    if (model.default_moderation) {
      if (defaultModeration >= 0) {
        throw item.child("default_moderation", true).invalid(
          `only one model can be the default moderation model (also models[${defaultModeration}])`,
        );
      }
      defaultModeration = i;
    }
    ids.set(model.id, i);
    models.push(model);
  });
  checkSemanticModels(r, models);
  return models;
}

/** Each semantic cache names an embedding model of the config (a model the admin API adds later
 * is not known here). */
function checkSemanticModels(r: Reader, models: readonly ModelConfig[]): void {
  models.forEach((model, i) => {
    const semantic = model.cache?.semantic;
    if (!semantic) return;
    const target = models.find((m) => m.id === semantic.model);
    if (target?.embeddings) return;
    const at = r.child(i, undefined).child("cache", undefined).child("semantic", undefined);
    throw at.child("model", semantic.model).invalid(
      target
        ? `model ${quote(semantic.model)} has no embeddings`
        : `no model ${quote(semantic.model)} in models`,
    );
  });
}
