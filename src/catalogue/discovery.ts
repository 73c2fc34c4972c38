/**
 * Model discovery (`discover: true` on a provider): the models an upstream lists, offered in
 * the catalogue under the provider's `discover_prefix` with its `discover_access`. Each
 * process lists for itself, at start and every `discover_interval_seconds`, and keeps what it
 * found in memory beside the KV records (Catalogue.setDiscovered): nothing is written to KV,
 * so no instance can clobber another's catalogue, and a restart lists again.
 */
import type { Clock } from "../clock.ts";
import type { DiscoveryConfig, ProviderConfig } from "../config/types.ts";
import { MODEL_ID } from "../config/models.ts";
import type { Logger } from "../log/logger.ts";
import type { ProviderLookup } from "../providers/types.ts";
import type { ListedModel } from "../providers/types.ts";
import type { ModelRecord } from "./model.ts";
import type { Catalogue } from "./store.ts";

/** Seconds before a failed listing is tried again (no interval is shorter). */
const RETRY_SECONDS = 60;
/** The shortest wait between two rounds of the timer, in milliseconds. */
const MIN_WAIT_MS = 1000;

/** What {@link ModelDiscovery} works with. */
export interface DiscoveryOptions {
  /** Every configured provider; those with `discovery` settings are listed. */
  config: readonly ProviderConfig[];
  providers: ProviderLookup;
  catalogue: Catalogue;
  clock: Clock;
  logger: Logger;
}

/** One provider that discovers, and what its last good listing found. */
interface Source {
  config: ProviderConfig;
  settings: DiscoveryConfig;
  list(signal: AbortSignal): Promise<ListedModel[]>;
  /** When (clock milliseconds) it is to be listed next. */
  due: number;
  /** The records of its last good listing (none before the first). */
  records: ModelRecord[];
}

/**
 * Lists the models of the providers that discover and hands them to the catalogue. A listing
 * that fails is logged (without the key) and the provider keeps the models of its last good
 * one; it is tried again after a minute. A model id that two providers both discover is
 * served by the one configured first.
 */
export class ModelDiscovery {
  readonly #sources: Source[] = [];
  readonly #catalogue: Catalogue;
  readonly #clock: Clock;
  readonly #logger: Logger;
  /** Aborts the listings in flight on close. */
  readonly #stop = new AbortController();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #round: Promise<void> | null = null;

  constructor(options: DiscoveryOptions) {
    this.#catalogue = options.catalogue;
    this.#clock = options.clock;
    this.#logger = options.logger;
    for (const config of options.config) {
      if (!config.discovery) continue;
      const provider = options.providers.get(config.id);
      if (!provider) continue; // disabled (no key): already warned about
      if (!provider.listModels) {
        this.#logger.warn(`model discovery: provider "${config.id}" cannot list its models`);
        continue;
      }
      this.#sources.push({
        config,
        settings: config.discovery,
        list: provider.listModels.bind(provider),
        due: this.#clock.now(),
        records: [],
      });
    }
  }

  /** Lists the providers that are due (all of them at first), then schedules the next round
   * by the clock; the first round runs after the current task, so it never delays a start. */
  start(): void {
    if (this.#sources.length === 0) return;
    const run = async () => {
      await this.tick();
      if (this.#stop.signal.aborted) return;
      const next = Math.min(...this.#sources.map((s) => s.due));
      this.#timer = setTimeout(run, Math.max(MIN_WAIT_MS, next - this.#clock.now()));
      Deno.unrefTimer(this.#timer);
    };
    this.#timer = setTimeout(run, 0);
    Deno.unrefTimer(this.#timer);
  }

  /** Lists every provider whose listing is due by the clock and updates the catalogue;
   * a round already running is joined. */
  tick(): Promise<void> {
    this.#round ??= (async () => {
      try {
        const now = this.#clock.now();
        await Promise.all(this.#sources.filter((s) => s.due <= now).map((s) => this.#list(s)));
        if (!this.#stop.signal.aborted) this.#publish();
      } finally {
        this.#round = null;
      }
    })();
    return this.#round;
  }

  /** Stops the timer and the listings in flight. */
  close(): void {
    this.#stop.abort();
    clearTimeout(this.#timer);
  }

  async #list(source: Source): Promise<void> {
    const started = this.#clock.now();
    try {
      const listed = await source.list(this.#stop.signal);
      source.records = this.#records(source, listed);
      source.due = started + source.settings.interval_seconds * 1000;
    } catch (e) {
      if (this.#stop.signal.aborted) return;
      source.due = started + RETRY_SECONDS * 1000;
      this.#logger.warn(
        `model discovery: provider "${source.config.id}" could not list its models (${
          e instanceof Error ? e.message : String(e)
        }); keeping the ${source.records.length} of its last listing, trying again in ${RETRY_SECONDS} s`,
      );
    }
  }

  /** The catalogue records of a listing; `created`, when the upstream gives none, is when
   * this process first saw the model. */
  #records(source: Source, listed: readonly ListedModel[]): ModelRecord[] {
    const { config } = source;
    const { prefix, access } = source.settings;
    const before = new Map(source.records.map((r) => [r.upstream_model, r]));
    const now = Math.floor(this.#clock.now() / 1000);
    const records = new Map<string, ModelRecord>();
    let unfit = 0;
    for (const model of listed) {
      const id = prefix + model.id;
      if (!MODEL_ID.pattern.test(id)) {
        unfit++;
        continue;
      }
      records.set(id, {
        id,
        provider: config.id,
        upstream_model: model.id,
        owned_by: config.id,
        created: model.created ?? before.get(model.id)?.created ?? now,
        chat_completions: true,
        moderation: false,
        // Not stated: off, so that a request the model may not take fails here with a 400.
        image_input: model.imageInput ?? false,
        function_calling: model.functionCalling ?? false,
        image_generation: null,
        embeddings: null,
        access,
        featured: false,
        labels: [],
        context_length: model.contextLength,
        default_max_tokens: null,
        default_moderation: false,
        moderation_mode: config.style === "anthropic" ? "guard" : "native",
        moderation_thresholds: {},
        enabled: true,
        source: "discovery",
      });
    }
    if (unfit > 0) {
      this.#logger.warn(
        `model discovery: provider "${config.id}" lists ${unfit} models whose ids (with the prefix ${
          JSON.stringify(prefix)
        }) are not valid model ids; they are left out`,
      );
    }
    const found = [...records.values()];
    const added = found.filter((r) => !before.has(r.upstream_model)).length;
    const gone = source.records.length - (found.length - added);
    if (added > 0 || gone > 0) {
      this.#logger.info(
        `model discovery: provider "${config.id}" offers ${found.length} models (${added} new, ${gone} gone)`,
      );
    }
    return found;
  }

  /** Hands every source's records to the catalogue, the first configured winning an id. */
  #publish(): void {
    const byId = new Map<string, ModelRecord>();
    for (const source of this.#sources) {
      for (const record of source.records) if (!byId.has(record.id)) byId.set(record.id, record);
    }
    this.#catalogue.setDiscovered([...byId.values()]);
  }
}
