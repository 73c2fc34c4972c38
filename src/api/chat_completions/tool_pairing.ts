import type { Message } from "../../canonical/conversation.ts";
import { quote } from "../../quote.ts";
import { invalidValue } from "../../routes/params.ts";

/** One assistant message's tool calls and which of them have been answered. */
interface OpenCalls {
  path: string;
  ids: string[];
  answered: Set<string>;
}

/**
 * Checks, message by message, OpenAI's rule for tool calls: every tool message answers a call
 * of the assistant message just before the tool messages, each call once, and every call is
 * answered before the next message that is not a tool message.
 */
export class ToolCallPairing {
  #open: OpenCalls | null = null;

  /** Takes the next message (`messages[index]`); throws the 400 for a broken pairing. */
  add(message: Message, index: number): void {
    const path = `messages[${index}]`;
    if (message.role === "tool") {
      this.#answer(message, path);
      return;
    }
    this.end();
    const ids = message.parts.flatMap((p) => p.type === "tool_call" ? [p.id] : []);
    if (message.role === "assistant" && ids.length > 0) {
      this.#open = { path, ids, answered: new Set() };
    }
  }

  /** Checks that the last assistant message's tool calls were all answered. */
  end(): void {
    const open = this.#open;
    this.#open = null;
    if (!open) return;
    const j = open.ids.findIndex((id) => !open.answered.has(id));
    if (j < 0) return;
    const param = `${open.path}.tool_calls[${j}].id`;
    throw invalidValue(
      `The tool call ${
        quote(open.ids[j])
      } (\`${param}\`) has no tool message answering it; an assistant message with \`tool_calls\` must be followed by one tool message per call.`,
      param,
    );
  }

  #answer(message: Message, path: string): void {
    const open = this.#open;
    const param = `${path}.tool_call_id`;
    if (open === null) {
      throw invalidValue(
        `\`${path}\` is a tool message but does not follow an assistant message with \`tool_calls\`; a tool message must answer one of the tool calls of the assistant message before it.`,
        param,
      );
    }
    const result = message.parts[0];
    const id = result?.type === "tool_result" ? result.callId : "";
    if (!open.ids.includes(id)) {
      throw invalidValue(
        `\`${param}\` is ${quote(id)}, which is not the id of any tool call in ${open.path} (ids: ${
          open.ids.slice(0, 5).map((i) => quote(i)).join(", ") + (open.ids.length > 5 ? ", …" : "")
        }).`,
        param,
      );
    }
    if (open.answered.has(id)) {
      throw invalidValue(
        `\`${param}\`: the tool call ${quote(id)} has already been answered.`,
        param,
      );
    }
    open.answered.add(id);
  }
}
