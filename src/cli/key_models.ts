import { allowListWarnings } from "../auth/key_fields.ts";
import { Catalogue } from "../catalogue/store.ts";
import { unmatchedPatterns } from "../catalogue/model.ts";
import type { Clock } from "../clock.ts";
import type { Config } from "../config/types.ts";

/** What {@link checkKeyModels} reads, and where it warns. */
export interface KeyModelsDeps {
  kv: Deno.Kv;
  clock: Clock;
  config: Config;
  /** Keep an allow-list that would be refused, with a warning. */
  force: boolean;
  warn(message: string): void;
}

/**
 * Refuses a key's allow-list (`--models`) that lets it use no model in the catalogue (in KV)
 * or the config: the empty list, or a pattern that matches no model. With `force` it is kept,
 * with a warning for each such pattern. `null` (every model) is never refused.
 */
export async function checkKeyModels(
  models: readonly string[] | null,
  deps: KeyModelsDeps,
): Promise<void> {
  if (models === null) return;
  const catalogue = await Catalogue.open({ kv: deps.kv, clock: deps.clock });
  const ids = [...catalogue.all().map((m) => m.id), ...deps.config.models.map((m) => m.id)];
  catalogue.close();
  const warnings = allowListWarnings(models, ids);
  if (warnings.length === 0) return;
  if (!deps.force) throw new Error(refusal(models, ids));
  for (const warning of warnings) deps.warn(warning);
}

/** Why `--models` is refused without `--force`: it is empty, or names `patterns` of which
 * some match none of `ids`. */
function refusal(patterns: readonly string[], ids: readonly string[]): string {
  if (patterns.length === 0) {
    return "--models: the list is empty, so a key limited to it could use nothing; name " +
      'model ids (or "all"), or pass --force to keep it';
  }
  const unmatched = unmatchedPatterns(patterns, ids);
  const list = unmatched.map((p) => JSON.stringify(p)).join(", ");
  return `--models: ${list} ${unmatched.length === 1 ? "matches" : "match"} no model in the ` +
    "catalogue or the config (a key limited to it could use nothing); check the ids, or " +
    "pass --force to keep them";
}
