/**
 * Anthropic's rule for tool blocks, checked message by message as a Messages request is read:
 * the `tool_use` ids of a message are unique, the message right after it answers each of them
 * with one `tool_result` (so a conversation cannot end with a `tool_use`), and every
 * `tool_result` answers a `tool_use` of the message just before it. The errors use the words of
 * Anthropic's own API.
 */
import { clip } from "../../quote.ts";
import { invalidValue } from "../../validation/error.ts";
import type { Reader } from "../../validation/reader.ts";

/** Ids an error lists at most. */
const LISTED = 5;

/** One message's `tool_use` ids, with the message's path (`messages[3]`). */
interface Uses {
  path: string;
  ids: Set<string>;
}

/** Checks the pairing of `tool_use` and `tool_result` blocks; see the module doc. */
export class ToolUsePairing {
  /** The previous message's `tool_use` ids, which the current message must answer. */
  #asked: Uses | null = null;
  /** The ids the current message has answered so far. */
  #answered = new Set<string>();
  /** The current message's own `tool_use` ids. */
  #used: Uses | null = null;

  /** Starts the message at `path`; the previous message must have answered every `tool_use`
   * of the one before it. */
  next(path: string): void {
    this.#close();
    this.#used = { path, ids: new Set() };
  }

  /** A `tool_use` block of the current message, with its id. */
  use(id: string, block: Reader): void {
    const ids = this.#used!.ids;
    if (ids.has(id)) throw invalidValue(`${block.path}.id`, "`tool_use` ids must be unique");
    ids.add(id);
  }

  /** A `tool_result` block of the current message, answering `id`. */
  answer(id: string, block: Reader): void {
    const path = `${block.path}.tool_use_id`;
    if (!this.#asked?.ids.has(id)) {
      throw invalidValue(
        path,
        `unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${
          clip(id)
        }. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message`,
      );
    }
    if (this.#answered.has(id)) {
      throw invalidValue(
        path,
        `each tool_use must have a single result, but ${clip(id)} has more than one`,
      );
    }
    this.#answered.add(id);
  }

  /** Ends the conversation: the last message's answers are checked, and a `tool_use` in the
   * last message has no message after it to answer it. */
  end(): void {
    this.#close();
    unanswered(this.#asked, new Set());
  }

  /** The current message is read whole: it becomes the previous one. */
  #close(): void {
    unanswered(this.#asked, this.#answered);
    this.#asked = this.#used;
    this.#answered = new Set();
    this.#used = null;
  }
}

/** Throws the 400 for the ids of `asked` that are not in `answered`, if any. */
function unanswered(asked: Uses | null, answered: ReadonlySet<string>): void {
  const missing = [...asked?.ids ?? []].filter((id) => !answered.has(id));
  if (missing.length === 0) return;
  const listed = missing.slice(0, LISTED).map((id) => clip(id)).join(", ");
  throw invalidValue(
    asked!.path,
    `\`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${listed}${
      missing.length > LISTED ? ", \u2026" : ""
    }. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message`,
  );
}
