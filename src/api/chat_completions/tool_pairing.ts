import type { Message } from "../../canonical/conversation.ts";
import { quote } from "../../quote.ts";
import { invalidValue } from "../../validation/error.ts";

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
    if (message.role === "tool") {
      this.#answer(message, `messages[${index}]`);
      return;
    }
    this.end();
    if (message.role !== "assistant") return;
    const ids = message.parts.flatMap((p) => p.type === "tool_call" ? [p.id] : []);
    if (ids.length > 0) this.#open = { path: `messages[${index}]`, ids, answered: new Set() };
  }

  /** Checks that the last assistant message's tool calls were all answered. */
  end(): void {
    const open = this.#open;
    this.#open = null;
    if (!open) return;
    const j = open.ids.findIndex((id) => !open.answered.has(id));
    if (j < 0) return;
    throw invalidValue(
      `${open.path}.tool_calls[${j}].id`,
      `the tool call ${
        quote(open.ids[j])
      } has no tool message answering it; an assistant message with 'tool_calls' must be followed by one tool message per call`,
    );
  }

  #answer(message: Message, path: string): void {
    const open = this.#open;
    const param = `${path}.tool_call_id`;
    if (open === null) {
      throw invalidValue(
        param,
        "this tool message does not follow an assistant message with 'tool_calls'; a tool message must answer one of the tool calls of the assistant message before it",
      );
    }
    const result = message.parts[0];
    const id = result?.type === "tool_result" ? result.callId : "";
    if (!open.ids.includes(id)) {
      const ids = open.ids.slice(0, 5).map((i) => quote(i)).join(", ");
      throw invalidValue(
        param,
        `expected the id of a tool call in ${open.path} (${ids}${
          open.ids.length > 5 ? ", \u2026" : ""
        }), but got ${quote(id)}`,
      );
    }
    if (open.answered.has(id)) {
      throw invalidValue(param, `the tool call ${quote(id)} has already been answered`);
    }
    open.answered.add(id);
  }
}
