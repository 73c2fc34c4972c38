/**
 * Where a request uses what only some models or back ends serve, recorded by the front door as
 * it parses the request, each use by its path in the door's wire format
 * (`messages[2].content[0]`), for the one capability check made once the model is known
 * (`api/shared/capabilities.ts`).
 */
export interface Uses {
  /** Image inputs (in messages, or in tool results). */
  images: string[];
  /** PDF documents (in messages, or in tool results); text documents need nothing. */
  documents: string[];
  /** Tool calls and tool results in the conversation. */
  toolUses: string[];
  /** What only the door's own protocol carries (documents, search results...): a model takes
   * it only from a back end that speaks that protocol. The path of its `type`, and the type. */
  protocolOnly: { path: string; type: string }[];
  /** Tools that only the door's protocol's own back end runs (the Responses API's hosted tools,
   * Messages' server tools, Gemini's built-in tools): elsewhere left out or refused, as the
   * model's `hosted_tools` policy says. The path of its `type`, and the type. */
  hostedTools: { path: string; type: string }[];
}

/** Nothing used yet. */
export function noUses(): Uses {
  return { images: [], documents: [], toolUses: [], protocolOnly: [], hostedTools: [] };
}
