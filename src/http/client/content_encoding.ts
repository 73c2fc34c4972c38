/**
 * The content coding of an upstream's answer. Both clients ask for `accept-encoding: identity`
 * (a provider's `headers` cannot change that) and inflate nothing, so an answer that comes
 * compressed anyway is refused here rather than handed to the JSON or SSE parser as gzip bytes.
 */

/** The upstream answered with a content coding other than identity. */
export class ContentEncodingRefused extends Error {
  /** The `Content-Encoding` the upstream sent. */
  readonly encoding: string;

  constructor(encoding: string) {
    super(
      `The upstream answered with Content-Encoding ${JSON.stringify(encoding)}, though ` +
        "Switchyard asked for an uncompressed answer (accept-encoding: identity).",
    );
    this.name = "ContentEncodingRefused";
    this.encoding = encoding;
  }
}

/** The header that asks for uncompressed answers, as both clients send it. */
export const ACCEPT_ENCODING = "accept-encoding";
/** Its only value. */
export const IDENTITY = "identity";

/** Throws {@link ContentEncodingRefused} unless `value` (a `Content-Encoding`, all its values
 * comma-joined, or `null` when absent) names no coding but identity. */
export function refuseEncoded(value: string | null): void {
  if (value === null || value === "") return;
  for (const coding of value.split(",")) {
    const name = coding.trim().toLowerCase();
    if (name !== "" && name !== IDENTITY) throw new ContentEncodingRefused(value);
  }
}
