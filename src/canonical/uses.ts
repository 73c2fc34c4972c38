/** Where a Messages request uses what only some models or back ends serve: recorded while it
 * is parsed, each by the path of the block or tool (`messages[2].content[0]`), for the
 * capability checks made once the model is known. */
export interface Uses {
  /** Image blocks, in messages or in tool results. */
  images: string[];
  /** `tool_use` and `tool_result` blocks. */
  toolBlocks: string[];
  /** Blocks and tools that only Anthropic's own API understands (documents, server tools...):
   * the path of their `type`, and the type. */
  anthropicOnly: { path: string; type: string }[];
}

/** Nothing used yet. */
export function noUses(): Uses {
  return { images: [], toolBlocks: [], anthropicOnly: [] };
}
