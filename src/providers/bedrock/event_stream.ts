/**
 * AWS's `application/vnd.amazon.eventstream` framing, decoded incrementally: each message is a
 * prelude (total length, headers length, the prelude's CRC-32), typed headers, a payload and
 * the CRC-32 of all before it. Bytes may arrive split anywhere; both CRCs are checked.
 */
import { upstreamError } from "../../errors.ts";
import { crc32 } from "../../images/png.ts";

/** A header value as the framing types it (bytes as base64, a timestamp as epoch ms). */
export type EventHeaderValue = string | number | boolean | bigint | Uint8Array;

/** One decoded message: its headers by name, and its payload's bytes. */
export interface EventMessage {
  headers: Record<string, EventHeaderValue>;
  payload: Uint8Array;
}

/** Prelude (12 bytes) and message CRC (4 bytes): the least a message has. */
const OVERHEAD = 16;

/** The 502 for bytes that are not event-stream framing. */
function broken(what: string): Error {
  return upstreamError(`The upstream provider answered with a broken event stream (${what}).`);
}

/** Decodes event-stream messages from bytes fed in pieces, holding at most one message. */
export class EventStreamDecoder {
  readonly #maxMessageBytes: number;
  /** Bytes of the message being read, kept across pieces: `#held` of `#buffer`'s capacity
   * (doubled as needed, so a message that arrives in many pieces is copied a bounded number of
   * times). */
  #buffer: Uint8Array = new Uint8Array(0);
  #held = 0;

  /** `maxMessageBytes`: a message declaring more is refused (a 502) before it is read. */
  constructor(maxMessageBytes: number) {
    this.#maxMessageBytes = maxMessageBytes;
  }

  /** The messages that `bytes` completes, in order. Throws a 502 on a bad prelude, a bad CRC
   * or a message over the limit. `bytes` is not kept (the reader may reuse it). */
  decode(bytes: Uint8Array): EventMessage[] {
    let buffer = bytes;
    if (this.#held > 0) {
      this.#hold(bytes, this.#held);
      buffer = this.#buffer.subarray(0, this.#held);
    }
    const messages: EventMessage[] = [];
    let at = 0;
    while (buffer.length - at >= 12) {
      const view = new DataView(buffer.buffer, buffer.byteOffset + at, buffer.length - at);
      const total = view.getUint32(0);
      const headersLength = view.getUint32(4);
      if (crc32(buffer.subarray(at, at + 8)) !== view.getUint32(8)) {
        throw broken("prelude CRC mismatch");
      }
      if (total < OVERHEAD + headersLength) throw broken("lengths out of range");
      if (total > this.#maxMessageBytes) {
        throw upstreamError(
          `The upstream provider sent a stream event larger than the gateway accepts (${this.#maxMessageBytes} bytes).`,
        );
      }
      if (buffer.length - at < total) break;
      const message = buffer.subarray(at, at + total);
      if (crc32(message.subarray(0, total - 4)) !== view.getUint32(total - 4)) {
        throw broken("message CRC mismatch");
      }
      messages.push({
        headers: readHeaders(message.subarray(12, 12 + headersLength)),
        // A copy: the bytes are the reader's (or this buffer), reused later.
        payload: message.slice(12 + headersLength, total - 4),
      });
      at += total;
    }
    const rest = buffer.subarray(at);
    if (buffer === bytes) {
      this.#held = 0;
      if (rest.length > 0) this.#hold(rest, 0);
    } else {
      this.#buffer.copyWithin(0, at, this.#held);
      this.#held = rest.length;
    }
    return messages;
  }

  /** Checks that the stream ended between messages (a 502 otherwise). */
  end(): void {
    if (this.#held > 0) throw broken("it ended inside a message");
  }

  /** Copies `bytes` into the buffer after its first `kept` bytes. */
  #hold(bytes: Uint8Array, kept: number): void {
    const needed = kept + bytes.length;
    if (needed > this.#buffer.length) {
      const grown = new Uint8Array(Math.max(needed, this.#buffer.length * 2, 4096));
      grown.set(this.#buffer.subarray(0, kept));
      this.#buffer = grown;
    }
    this.#buffer.set(bytes, kept);
    this.#held = needed;
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The headers of a message: a name (1-byte length), a type byte, a value. */
function readHeaders(bytes: Uint8Array): Record<string, EventHeaderValue> {
  const headers: Record<string, EventHeaderValue> = {};
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const need = (n: number) => {
    if (at + n > bytes.length) throw broken("a header runs past its section");
  };
  while (at < bytes.length) {
    need(1);
    const nameLength = bytes[at++]!;
    need(nameLength + 1);
    const name = text(bytes.subarray(at, at += nameLength));
    const type = bytes[at++]!;
    let value: EventHeaderValue;
    switch (type) {
      case 0:
        value = true;
        break;
      case 1:
        value = false;
        break;
      case 2:
        need(1);
        value = view.getInt8(at);
        at += 1;
        break;
      case 3:
        need(2);
        value = view.getInt16(at);
        at += 2;
        break;
      case 4:
        need(4);
        value = view.getInt32(at);
        at += 4;
        break;
      case 5:
        need(8);
        value = view.getBigInt64(at);
        at += 8;
        break;
      case 6:
      case 7: {
        need(2);
        const length = view.getUint16(at);
        at += 2;
        need(length);
        const raw = bytes.subarray(at, at += length);
        value = type === 7 ? text(raw) : raw.slice();
        break;
      }
      case 8:
        need(8);
        value = Number(view.getBigInt64(at));
        at += 8;
        break;
      case 9:
        need(16);
        value = bytes.slice(at, at += 16);
        break;
      default:
        throw broken(`unknown header type ${type}`);
    }
    headers[name] = value;
  }
  return headers;
}

function text(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw broken("a header that is not UTF-8");
  }
}
