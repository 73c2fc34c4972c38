/**
 * Thinking blocks of back ends other than Anthropic: the Messages API requires a `signature` on
 * every `thinking` block, and a client sends the block back unchanged. The gateway signs such a
 * block with the name of the style it came from (and the back end's own signature, for one that
 * signs its reasoning: Gemini's thought signatures), so that it knows the block again when it
 * returns: an Anthropic signature is any other value.
 */

/** What a gateway signature starts with. */
const PREFIX = "switchyard.reasoning.";

/** The signature of a thinking block from a back end of `style`, which signed it with
 * `signature` (if it did): Anthropic's as it is, another style's in the gateway's mark
 * (`switchyard.reasoning.gemini/<its signature>`). */
export function styleSignature(style: string | undefined, signature?: string): string {
  if (signature !== undefined && (style === undefined || style === "anthropic")) return signature;
  const mark = PREFIX + (style ?? "unknown");
  return signature === undefined ? mark : `${mark}/${signature}`;
}

/** The provider style a `thinking` block's signature names, and the signature its back end
 * gave: the gateway's own mark, else Anthropic's (whose signatures only Anthropic can check). */
export function signatureStyle(
  signature: string,
): { style: string; anthropic: boolean; signature?: string } {
  if (!signature.startsWith(PREFIX)) return { style: "anthropic", anthropic: true, signature };
  const mark = signature.slice(PREFIX.length);
  const slash = mark.indexOf("/");
  if (slash < 0) return { style: mark, anthropic: false };
  return { style: mark.slice(0, slash), anthropic: false, signature: mark.slice(slash + 1) };
}

/**
 * The body with the thinking blocks the gateway signed (from another style) left out of its
 * messages, for an Anthropic upstream that would reject their signatures: the same rule as the
 * canonical path's, where reasoning of another style is dropped. The body itself when it has
 * none (the common case: nothing is copied).
 */
export function withoutGatewayThinking(body: Record<string, unknown>): Record<string, unknown> {
  const messages = body.messages;
  if (!Array.isArray(messages) || !messages.some(hasGatewayThinking)) return body;
  return {
    ...body,
    messages: messages.map((m) =>
      hasGatewayThinking(m) ? { ...m, content: m.content.filter((b) => !isGatewayThinking(b)) } : m
    ),
  };
}

function hasGatewayThinking(message: unknown): message is { content: unknown[] } {
  const content = (message as { content?: unknown } | null)?.content;
  return Array.isArray(content) && content.some(isGatewayThinking);
}

function isGatewayThinking(block: unknown): boolean {
  const b = block as { type?: unknown; signature?: unknown } | null;
  return b?.type === "thinking" && typeof b.signature === "string" &&
    b.signature.startsWith(PREFIX);
}
