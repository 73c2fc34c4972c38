/** Byte arrays joined into one: the only one itself, or a new array holding them all in order. */
export function concatBytes<B extends ArrayBufferLike>(
  parts: readonly Uint8Array<B>[],
): Uint8Array<B | ArrayBuffer> {
  if (parts.length === 1) return parts[0]!;
  let length = 0;
  for (const part of parts) length += part.byteLength;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}
