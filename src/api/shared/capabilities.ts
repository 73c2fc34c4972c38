import type { ModelRecord } from "../../catalogue/model.ts";
import type { Uses } from "../../canonical/uses.ts";
import { unsupportedCapability } from "../../errors.ts";

/** What a chat call asks of its model, as every front door reports it. */
export interface ChatNeeds {
  /** How many tools the request declares. */
  tools: number;
  /** Where it uses images, documents, tool blocks and parts of its own protocol. */
  uses: Uses;
  /** The door's protocol, as refusals name it ("the Responses API"). */
  protocol: string;
  /** Whether the model's back end speaks that protocol (takes the call as written). */
  passedThrough: boolean;
}

/**
 * The one capability check of chat calls (spec §4.2 rules 4-6), the same for every front door:
 * a chat model; image inputs and PDF documents need `image_input`; tools, tool calls and tool results
 * `function_calling`; parts only the door's protocol carries a back end that speaks it, and so
 * do its hosted tools when the model's `hosted_tools` policy is `refuse` (under `drop`, the
 * default, they are left out: `callChat`). The first use in the request is named as the
 * `param`.
 */
export function checkChat(record: ModelRecord, needs: ChatNeeds): void {
  const id = record.id;
  if (!record.chat_completions) {
    throw unsupportedCapability(`The model \`${id}\` does not support chat completions.`, "model");
  }
  const { uses } = needs;
  const image = uses.images[0];
  if (!record.image_input && image !== undefined) {
    throw unsupportedCapability(
      `The model \`${id}\` does not accept image input; send text only or use a model with image_input.`,
      image,
    );
  }
  const document = uses.documents[0];
  if (!record.image_input && document !== undefined) {
    throw unsupportedCapability(
      `The model \`${id}\` does not accept PDF documents (they need image_input); send the document's text or use a model with image_input.`,
      document,
    );
  }
  if (!record.function_calling) {
    const why = `The model \`${id}\` does not support function calling (tools).`;
    if (needs.tools > 0) throw unsupportedCapability(why, "tools");
    const use = uses.toolUses[0];
    if (use !== undefined) throw unsupportedCapability(why, use);
  }
  const only = uses.protocolOnly[0] ??
    (record.hosted_tools === "refuse" ? uses.hostedTools[0] : undefined);
  if (!needs.passedThrough && only !== undefined) {
    throw unsupportedCapability(
      `The model \`${id}\` is not served by a provider that speaks ${needs.protocol}, so it cannot take \`${only.type}\`; only such models can.`,
      only.path,
    );
  }
}
