/**
 * The transfer coding of an upstream's answer. Both clients read a body framed by chunks, by its
 * length or by the close, and decode no other transfer coding: an answer whose
 * `Transfer-Encoding` is anything but `chunked` (`gzip, chunked`, `chunked, gzip`, `identity`,
 * an unknown coding) is refused here rather than handed to the JSON or SSE parser as coded or
 * mis-framed bytes.
 */

/** The upstream answered with a transfer coding other than `chunked` alone. */
export class TransferEncodingRefused extends Error {
  /** The `Transfer-Encoding` the upstream sent (all its values, comma-joined). */
  readonly coding: string;

  constructor(coding: string) {
    super(
      `The upstream answered with Transfer-Encoding ${JSON.stringify(coding)}; Switchyard ` +
        "reads only chunked framing.",
    );
    this.name = "TransferEncodingRefused";
    this.coding = coding;
  }
}

/** Throws {@link TransferEncodingRefused} unless `value` (a `Transfer-Encoding`, all its values
 * comma-joined, or `null` when absent) is `chunked` alone (in any case). */
export function refuseTransferCoded(value: string | null): void {
  if (value === null || value.trim().toLowerCase() === "chunked") return;
  throw new TransferEncodingRefused(value);
}
