import assert from "node:assert/strict";
import type { CanonicalEvent } from "../../src/canonical/events.ts";
import { ApiError, internalError, upstreamError } from "../../src/errors.ts";
import {
  type EventStreamOptions,
  eventStreamResponse,
  type StreamOutcome,
  type StreamRenderer,
} from "../../src/http/sse_response.ts";
import { textEvents } from "../support/events.ts";
import type { PolledBatches } from "../../src/canonical/polled_batches.ts";
import { ChatChunkRenderer } from "../../src/api/chat_completions/stream.ts";
import { MessagesStreamRenderer } from "../../src/api/messages/stream.ts";
import { ResultCollector } from "../../src/canonical/result_collector.ts";
import { parseResponsesRequest } from "../../src/api/responses/request.ts";
import { ResponsesStreamRenderer } from "../../src/api/responses/stream.ts";
import { ToolMap } from "../../src/api/responses/tool_map.ts";

const encoder = new TextEncoder();
const STREAM = textEvents(["Hi", " there"]);

/**
 * A renderer that writes one `data:` line per event of a batch, naming its type, skips
 * `usage` and `block_stop` events (so that a batch can render to nothing), and ends with
 * `[DONE]`.
 */
class LineRenderer implements StreamRenderer {
  render(events: readonly CanonicalEvent[]): Uint8Array | null {
    const lines = events
      .filter((e) => e.type !== "usage" && e.type !== "block_stop")
      .map((e) =>
        `data: ${e.type}${e.type === "block_delta" ? `:${JSON.stringify(e.delta)}` : ""}\n\n`
      );
    return lines.length === 0 ? null : encoder.encode(lines.join(""));
  }
  end(): Uint8Array {
    return encoder.encode("data: [DONE]\n\n");
  }
  error(error: ApiError): Uint8Array {
    return encoder.encode(`data: ${JSON.stringify(error.toBody())}\n\n`);
  }
}

/** A batch source that counts what it has produced and whether it was stopped. */
class Source {
  produced = 0;
  returned = false;
  constructor(
    readonly batches: CanonicalEvent[][],
    readonly fail?: { after: number; error: unknown },
  ) {}
  async *[Symbol.asyncIterator](): AsyncGenerator<CanonicalEvent[]> {
    try {
      for (const [i, batch] of this.batches.entries()) {
        if (this.fail && i === this.fail.after) throw this.fail.error;
        await Promise.resolve();
        this.produced++;
        yield structuredClone(batch);
      }
    } finally {
      this.returned = true;
    }
  }
}

/** Each event of the text stream as its own batch. */
const single = () => STREAM.map((e) => [e]);

function options(extra: Partial<EventStreamOptions> = {}) {
  const outcomes: StreamOutcome[] = [];
  const seen: CanonicalEvent[] = [];
  let later = 0;
  const abort = new AbortController();
  const opts: EventStreamOptions = {
    abort,
    signal: abort.signal,
    observe: (events) => seen.push(...events),
    settleLater: () => void later++,
    settle: (o) => outcomes.push(o),
    onUnexpected: () => internalError("req_x"),
    ...extra,
  };
  return { opts, outcomes, seen, later: () => later };
}

async function events(response: Response): Promise<string[]> {
  const text = await response.text();
  assert.ok(text.endsWith("\n\n"), "the body ends with a complete event");
  return text.slice(0, -2).split("\n\n");
}

Deno.test("eventStreamResponse renders each batch and ends with the renderer's closing bytes", async () => {
  const { opts, outcomes, seen, later } = options();
  const response = await eventStreamResponse(new Source(single()), new LineRenderer(), opts);
  assert.equal(later(), 1, "the stream settles the request from its first bytes");
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type")!, /^text\/event-stream/);
  assert.equal(response.headers.get("cache-control"), "no-cache");
  assert.deepEqual(await events(response), [
    "data: start",
    "data: block_start",
    'data: block_delta:{"type":"text","text":"Hi"}',
    'data: block_delta:{"type":"text","text":" there"}',
    "data: finish",
    "data: [DONE]",
  ]);
  assert.deepEqual(seen, STREAM, "every event is observed, rendered or not");
  assert.deepEqual(outcomes, [{ status: 200, error: null }]);
});

Deno.test("eventStreamResponse pulls one batch per read and never runs ahead", async () => {
  const source = new Source(single());
  const { opts } = options();
  const response = await eventStreamResponse(source, new LineRenderer(), opts);
  assert.equal(source.produced, 1, "only the first batch is taken before answering");
  const reader = response.body!.getReader();
  await reader.read();
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(source.produced, 1);
  await reader.read();
  assert.equal(source.produced, 2);
  await reader.cancel();
});

Deno.test("batches that render to nothing are skipped, before the first bytes too", async () => {
  const source = new Source([
    [{ type: "usage", usage: { input: 1, output: 1 } }],
    STREAM.slice(0, 2),
    [{ type: "block_stop", index: 0 }],
    STREAM.slice(5),
  ]);
  const { opts } = options();
  const response = await eventStreamResponse(source, new LineRenderer(), opts);
  assert.equal(source.produced, 2, "the answer waits for a batch that renders");
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const reads: string[] = [];
  for (let r = await reader.read(); !r.done; r = await reader.read()) reads.push(r.value);
  assert.deepEqual(reads, [
    "data: start\n\ndata: block_start\n\n",
    "data: finish\n\n",
    "data: [DONE]\n\n",
  ]);
});

Deno.test("a failure before the first bytes throws, so the caller can answer a JSON error", async () => {
  const { opts, outcomes, later } = options();
  const error = upstreamError("upstream down");
  const failing = new Source(single(), { after: 0, error });
  await assert.rejects(
    eventStreamResponse(failing, new LineRenderer(), opts),
    (e: unknown) => e === error,
  );
  assert.equal(later(), 0, "settling is not taken over: the caller settles the error");
  assert.deepEqual(outcomes, []);
  await assert.rejects(
    eventStreamResponse(new Source([]), new LineRenderer(), opts),
    /without sending anything/,
  );
  const silent = new Source([[{ type: "usage", usage: { input: 1, output: 0 } }]]);
  await assert.rejects(eventStreamResponse(silent, new LineRenderer(), opts), /without sending/);
});

Deno.test("a failure mid-stream becomes the renderer's error event, with no [DONE]", async () => {
  const { opts, outcomes } = options();
  const error = new ApiError(502, "upstream_error", "lost the upstream", {
    code: "upstream_error",
  });
  const list = await events(
    await eventStreamResponse(new Source(single(), { after: 2, error }), new LineRenderer(), opts),
  );
  assert.equal(list.length, 3);
  assert.deepEqual(JSON.parse(list[2]!.slice(6)), {
    error: {
      message: "lost the upstream",
      type: "upstream_error",
      code: "upstream_error",
      param: null,
    },
  });
  assert.ok(!list.includes("data: [DONE]"));
  assert.deepEqual(outcomes, [{ status: 502, error: "upstream_error" }]);

  const unexpected: unknown[] = [];
  const bug = options({
    onUnexpected: (e) => {
      unexpected.push(e);
      return internalError("req_x");
    },
  });
  const bugList = await events(
    await eventStreamResponse(
      new Source(single(), { after: 1, error: new TypeError("oops") }),
      new LineRenderer(),
      bug.opts,
    ),
  );
  assert.equal(bugList.length, 2);
  const body = JSON.parse(bugList[1]!.slice(6));
  assert.equal(body.error.code, "internal_error");
  assert.doesNotMatch(JSON.stringify(body), /oops/);
  assert.ok(unexpected[0] instanceof TypeError);
  assert.deepEqual(bug.outcomes, [{ status: 500, error: "internal_error" }]);
});

Deno.test("a stream whose events run out before its finish ends in the renderer's error event, a 502", async () => {
  const { opts, outcomes } = options();
  const list = await events(
    await eventStreamResponse(new Source(single().slice(0, 3)), new LineRenderer(), opts),
  );
  assert.match(list.at(-1)!, /before it finished the answer/);
  assert.ok(!list.includes("data: [DONE]"), "not closed as a finished answer");
  assert.deepEqual(outcomes, [{ status: 502, error: "upstream_error" }]);
});

Deno.test("every front door's stream without its finish ends in that protocol's 502 error event", async () => {
  const collector = new ResultCollector();
  const head = { requestId: "req_x", created: 1, model: "m", includeUsage: true };
  const renderers: [string, StreamRenderer, RegExp][] = [
    ["chat", new ChatChunkRenderer({ ...head, excludeReasoning: false }), /"upstream_error"/],
    [
      "messages",
      new MessagesStreamRenderer({ requestId: "req_x", model: "m", estimate: 1 }),
      /^event: error\ndata: .*"api_error"/,
    ],
    [
      "responses",
      new ResponsesStreamRenderer(
        {
          id: "resp_x",
          createdAt: 1,
          model: "m",
          previousResponseId: null,
          store: false,
          echo: parseResponsesRequest({ model: "m", input: "x" }).echo,
          tools: new ToolMap(),
        },
        false,
        collector,
        () => 1,
      ),
      /^event: response\.failed\n/,
    ],
  ];
  for (const [name, renderer, last] of renderers) {
    const { opts, outcomes } = options();
    const list = await events(
      await eventStreamResponse(new Source(single().slice(0, 3)), renderer, opts),
    );
    assert.match(list.at(-1)!, last, name);
    assert.match(list.at(-1)!, /before it finished the answer/, name);
    assert.deepEqual(outcomes, [{ status: 502, error: "upstream_error" }], name);
  }
});

Deno.test("cancelling the body aborts the producer, stops the iterator and logs 499", async () => {
  const source = new Source(single());
  const { opts, outcomes } = options();
  const response = await eventStreamResponse(source, new LineRenderer(), opts);
  const reader = response.body!.getReader();
  await reader.read();
  await reader.cancel();
  assert.equal(opts.abort.signal.aborted, true);
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(source.returned, true);
  assert.deepEqual(outcomes, [{ status: 499, error: "client_disconnected" }]);
});

Deno.test("a provider failing because the client's signal fired is a disconnect, not an error", async () => {
  const client = new AbortController();
  const unexpected: unknown[] = [];
  const { opts, outcomes } = options({
    signal: client.signal,
    onUnexpected: (e) => {
      unexpected.push(e);
      return internalError("req_x");
    },
  });
  const abortError = new DOMException("The client went away.", "AbortError");
  const response = await eventStreamResponse(
    new Source(single(), { after: 1, error: abortError }),
    new LineRenderer(),
    opts,
  );
  client.abort(abortError);
  const text = await response.text();
  assert.equal(text, "data: start\n\n", "no error event, no [DONE]");
  assert.deepEqual(unexpected, []);
  assert.deepEqual(outcomes, [{ status: 499, error: "client_disconnected" }]);
});

/** Polled batches whose reads are given by the test: `arrive(n)` makes the next n batches
 * ready (the end with them, at the last). */
class PolledSource implements PolledBatches {
  #ready = 0;
  #taken = 0;
  #wake = Promise.withResolvers<void>();
  constructor(readonly batches: CanonicalEvent[][]) {}
  arrive(n: number): void {
    this.#ready = Math.min(this.batches.length, this.#ready + n);
    this.#wake.resolve();
    this.#wake = Promise.withResolvers();
  }
  poll(): CanonicalEvent[] | null | undefined {
    if (this.#taken < this.#ready) return this.batches[this.#taken++];
    return this.#taken === this.batches.length ? null : undefined;
  }
  more(): Promise<void> {
    return this.#wake.promise;
  }
  return(): Promise<IteratorResult<CanonicalEvent[], undefined>> {
    return Promise.resolve({ done: true, value: undefined });
  }
  async *[Symbol.asyncIterator](): AsyncGenerator<CanonicalEvent[]> {
    for (;;) {
      const batch = this.poll();
      if (batch === null) return;
      if (batch === undefined) await this.more();
      else yield batch;
    }
  }
}

/** Whether a read of `reader` has settled one microtask after it was asked for (what the
 * server waits before it writes what it has). */
async function readyAtOnce(
  reader: ReadableStreamDefaultReader<Uint8Array>,
): Promise<ReadableStreamReadResult<Uint8Array> | null> {
  let result: ReadableStreamReadResult<Uint8Array> | null = null;
  const read = reader.read();
  read.then((r) => (result = r), () => {});
  await null;
  const ready = result;
  await read;
  return ready;
}

Deno.test("batches already read go out with the one a read asks for: the end of a burst is ready at once after its last batch", async () => {
  const source = new PolledSource(single());
  source.arrive(1);
  const { opts } = options();
  const response = await eventStreamResponse(source, new LineRenderer(), opts);
  const reader = response.body!.getReader();
  assert.ok(await readyAtOnce(reader), "the first batch");
  // Not read yet: nothing runs ahead of the upstream.
  const waiting = reader.read();
  source.arrive(STREAM.length);
  assert.equal(new TextDecoder().decode((await waiting).value), "data: block_start\n\n");
  const rendered = STREAM.slice(2).filter((e) => e.type !== "usage" && e.type !== "block_stop");
  for (const expected of rendered.map((e) => e.type)) {
    const read = await readyAtOnce(reader);
    assert.ok(read && !read.done, `${expected} was not ready at once`);
    assert.match(new TextDecoder().decode(read.value), new RegExp(`^data: ${expected}`));
  }
  const end = await readyAtOnce(reader);
  assert.equal(end && new TextDecoder().decode(end.value), "data: [DONE]\n\n");
  const done = await readyAtOnce(reader);
  assert.equal(done?.done, true);
});

Deno.test("the first content goes without the batches read after it: they are not even translated before it is out", async () => {
  // The first read brings only the start; the next one the content and the rest of a burst.
  const source = new PolledSource(single());
  source.arrive(1);
  const { opts, seen } = options();
  const response = await eventStreamResponse(source, new LineRenderer(), opts);
  const reader = response.body!.getReader();
  await reader.read();
  source.arrive(STREAM.length);
  // block_start renders; the first text is the batch after it.
  assert.equal(new TextDecoder().decode((await reader.read()).value), "data: block_start\n\n");
  const text = await reader.read();
  assert.match(new TextDecoder().decode(text.value), /"text":"Hi"/);
  assert.equal(seen.length, 3, "events after the first content were taken with it");
  await reader.cancel();
});
