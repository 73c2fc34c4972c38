import type { CanonicalRequest } from "../../canonical/conversation.ts";
import type { ModelRecord } from "../../catalogue/model.ts";
import { unsupportedCapability } from "../../errors.ts";
import type { Uses } from "../../canonical/uses.ts";

/**
 * The model's capabilities against what a Messages request uses (as the chat endpoint checks
 * them): a chat model; image blocks need `image_input`; tools and tool blocks
 * `function_calling`. Blocks and server tools only Anthropic understands need a model served
 * by an Anthropic-style provider (`forwarded`: the call goes to it as written).
 */
export function checkCapabilities(
  req: CanonicalRequest,
  uses: Uses,
  record: ModelRecord,
  forwarded: boolean,
): void {
  const id = record.id;
  if (!record.chat_completions) {
    throw unsupportedCapability(`The model \`${id}\` does not support chat.`, "model");
  }
  const image = uses.images[0];
  if (!record.image_input && image !== undefined) {
    throw unsupportedCapability(
      `The model \`${id}\` does not accept image input; send text only or use a model with image_input.`,
      image,
    );
  }
  if (!record.function_calling) {
    const why = `The model \`${id}\` does not support function calling (tools).`;
    if (req.options.tools.length > 0) throw unsupportedCapability(why, "tools");
    const block = uses.toolBlocks[0];
    if (block !== undefined) throw unsupportedCapability(why, block);
  }
  const only = uses.anthropicOnly[0];
  if (!forwarded && only !== undefined) {
    throw unsupportedCapability(
      `The model \`${id}\` is not served by an Anthropic-style provider, so it cannot take \`${only.type}\`; only Anthropic models do.`,
      only.path,
    );
  }
}
