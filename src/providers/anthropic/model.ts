/** What an Anthropic model accepts, as far as its id tells. */
export interface AnthropicModelTraits {
  /**
   * How extended thinking is asked for: not at all (Claude 3.5 and older have none), with a
   * token budget (`thinking: {type: "enabled", budget_tokens}`, Claude 3.7 to 4.6), or as an
   * effort (`thinking: {type: "adaptive"}` + `output_config.effort`, Claude 4.7 and later,
   * which answer `enabled` with a 400).
   */
  thinking: "none" | "budget" | "adaptive";
  /** Native structured outputs (`output_config.format`, `strict` tools): Claude 4.5 and
   * later (GA on Haiku/Sonnet/Opus 4.5 and Sonnet/Opus 4.6). */
  structuredOutputs: boolean;
  /** Sampling the model fixes (models after Opus 4.6): only `temperature` 1, `top_p` >= 0.99,
   * no `top_k`. */
  fixedSampling: boolean;
}

/** `claude-sonnet-4-5...`, `claude-opus-4-20250514` (4.0; a date is no minor version),
 * `anthropic.claude-haiku-4-5...`, `claude-sonnet-4.5`. */
const FAMILY_FIRST = /claude-(?:opus|sonnet|haiku)-(\d{1,2})(?:[-.](\d{1,2}))?(?!\d)/;
/** `claude-3-7-sonnet...`, `claude-3-5-haiku-latest`, `claude-3-opus...`. */
const VERSION_FIRST = /claude-(\d{1,2})(?:[-.](\d{1,2}))?-(?:opus|sonnet|haiku)/;

/**
 * The traits of the upstream model `id`, read from the version in its name (the rule is
 * Anthropic's published model matrix). A name without a recognisable Claude version (an alias
 * of the operator's) is taken to think with a budget, the form most models accept, and to have
 * neither native structured outputs (the forced-tool fallback works everywhere) nor fixed
 * sampling.
 */
export function anthropicModelTraits(id: string): AnthropicModelTraits {
  const name = id.toLowerCase();
  const match = FAMILY_FIRST.exec(name) ?? VERSION_FIRST.exec(name);
  if (match === null) return { thinking: "budget", structuredOutputs: false, fixedSampling: false };
  const version = Number(match[1]) * 100 + Number(match[2] ?? 0);
  return {
    thinking: version >= 407 ? "adaptive" : version >= 307 ? "budget" : "none",
    structuredOutputs: version >= 405,
    fixedSampling: version >= 407,
  };
}
