import type { CanonicalRequest } from "../../canonical/conversation.ts";
import { noUses, type Uses } from "../../canonical/uses.ts";

/** Where a chat completions request uses images, PDF documents and tool blocks, by their wire
 * paths (its canonical messages are its `messages`, one for one, and a user message's parts its
 * content parts). */
export function chatUses(req: CanonicalRequest): Uses {
  const uses = noUses();
  req.messages.forEach((m, i) => {
    m.parts.forEach((p, j) => {
      if (p.type === "image") uses.images.push(`messages[${i}].content[${j}]`);
      else if (p.type === "document" && p.source.kind !== "text") {
        uses.documents.push(`messages[${i}].content[${j}]`);
      }
    });
    if (m.role === "tool") uses.toolUses.push(`messages[${i}].role`);
    else if (m.parts.some((p) => p.type === "tool_call")) {
      uses.toolUses.push(`messages[${i}].tool_calls`);
    }
  });
  return uses;
}
