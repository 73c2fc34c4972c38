import type { ImagePart } from "../../canonical/conversation.ts";
import { inspectImage } from "../../http/image_data_url.ts";
import { clip } from "../../quote.ts";

/** Characters of an image URL the simulator repeats. */
const URL_CHARS = 100;

/**
 * What the simulator says about a message's images: each inline one's format, size in bytes
 * and pixels (read from its header), each one by URL that it was not fetched. `""` for none.
 */
export function describeImages(images: readonly ImagePart[]): string {
  if (images.length === 0) return "";
  const parts = images.map((part, i) => `image ${i + 1} ${describeImage(part)}`);
  const s = images.length === 1 ? "" : "s";
  return ` You sent ${images.length} image${s}: ${parts.join("; ")}.`;
}

function describeImage(part: ImagePart): string {
  const { source } = part;
  if (source.kind === "url") {
    return `is at the URL ${clip(source.url, URL_CHARS)}, which the simulator does not fetch`;
  }
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.fromBase64(source.base64);
  } catch {
    return `is ${source.mediaType} data that is not valid base64`;
  }
  const size = bytes.length.toLocaleString("en-US");
  const info = inspectImage(bytes);
  if (!info) return `is ${source.mediaType} data of ${size} bytes that the simulator cannot read`;
  return `is a ${info.format.toUpperCase()} of ${size} bytes, ${info.width} × ${info.height} pixels`;
}
