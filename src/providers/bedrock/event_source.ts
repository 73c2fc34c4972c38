/** An accepted ConverseStream answer read as event-stream messages (for `EventBatches`). */
import type { EventSource } from "../event_batches.ts";
import type { UpstreamResponse } from "../upstream/response.ts";
import { type EventMessage, EventStreamDecoder } from "./event_stream.ts";

/** The messages of a streamed answer's body, decoded as they arrive. */
export class EventStreamSource implements EventSource<EventMessage> {
  readonly #response: UpstreamResponse;
  readonly #decoder: EventStreamDecoder;
  readonly #decode = (bytes: Uint8Array) => this.#decoder.decode(bytes);

  /** `maxMessageBytes`: the largest message accepted (the provider's `max_event_bytes`). */
  constructor(response: UpstreamResponse, maxMessageBytes: number) {
    this.#response = response;
    this.#decoder = new EventStreamDecoder(maxMessageBytes);
  }

  takeEvents(): EventMessage[] | null | undefined {
    const messages = this.#response.takeDecoded(this.#decode);
    if (messages === null) this.#decoder.end();
    return messages;
  }

  more(): Promise<void> {
    return this.#response.more();
  }

  release(): void {
    this.#response.release();
  }

  close(): void {
    this.#response.close();
  }
}
