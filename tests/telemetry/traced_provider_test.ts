import assert from "node:assert/strict";
import type { CanonicalEvent } from "../../src/canonical/events.ts";
import { upstreamError } from "../../src/errors.ts";
import type { Provider } from "../../src/providers/types.ts";
import { tracedProvider } from "../../src/telemetry/traced_provider.ts";
import { Tracing } from "../../src/telemetry/tracing.ts";
import { textEvents } from "../support/events.ts";
import { recordingOtel } from "../support/recording_otel.ts";
import { callContext, chatRequest, providerDeps } from "../support/provider_call.ts";

const config = providerDeps("openai", "https://api.example.com:8443/v1", "k").config;

/** A provider streaming `events` one per batch, then throwing `error` when given. */
function streaming(events: CanonicalEvent[], error?: Error): Provider {
  return {
    id: "up",
    chat: () => Promise.reject(error),
    chatStream: async function* () {
      for (const event of events) yield [event];
      if (error) throw error;
    },
  };
}

Deno.test("tracedProvider: a chat is one CLIENT span under the active one, with GenAI attributes and metrics", async () => {
  const { api, spans, points } = recordingOtel();
  const inner: Provider = {
    id: "up",
    chat: () =>
      Promise.resolve({
        id: "chatcmpl-1",
        parts: [{ type: "text", text: "Hi!" }],
        finish: "length",
        usage: { input: 12, output: 3 },
      }),
    chatStream: streaming([]).chatStream,
  };
  const provider = tracedProvider(inner, config, new Tracing(api, false));
  await provider.chat(chatRequest({}, { temperature: 0.5 }), callContext());
  assert.equal(spans.length, 1);
  const [span] = spans;
  assert.deepEqual({ ...span, attributes: undefined }, {
    name: "chat upstream-model-v1",
    kind: 2,
    attributes: undefined,
    status: null,
    ended: 1,
    parent: "server span",
  });
  assert.equal(span!.attributes["gen_ai.request.temperature"], 0.5);
  assert.equal(span!.attributes["gen_ai.request.max_tokens"], 256n);
  assert.equal(span!.attributes["server.address"], "api.example.com");
  assert.equal(span!.attributes["server.port"], 8443n);
  assert.equal(span!.attributes["gen_ai.usage.input_tokens"], 12n);
  assert.equal(span!.attributes["gen_ai.usage.output_tokens"], 3n);
  assert.deepEqual(span!.attributes["gen_ai.response.finish_reasons"], ["length"]);
  assert.equal(span!.attributes["gen_ai.response.id"], "chatcmpl-1");
  assert.equal(span!.attributes["gen_ai.input.messages"], undefined);
  assert.deepEqual(
    points.map((p) => [p.name, p.value, p.attributes["gen_ai.token.type"]]).slice(1),
    [["gen_ai.client.token.usage", 12, "input"], ["gen_ai.client.token.usage", 3, "output"]],
  );
  assert.equal(points[0]!.name, "gen_ai.client.operation.duration");
});

Deno.test("tracedProvider: a stream's span ends once with its usage, or its error, or as client_disconnected", async () => {
  const { api, spans } = recordingOtel();
  const tracing = new Tracing(api, true);
  const events = textEvents(["Hello", " world"], { input: 7, output: 2 });
  // Read to the end, with content recorded.
  for await (
    const _ of tracedProvider(streaming(events), config, tracing).chatStream(
      chatRequest(),
      callContext(),
    )
  ) { /* read */ }
  // Failing mid-way.
  const failing = tracedProvider(
    streaming(events.slice(0, 3), upstreamError("gone")),
    config,
    tracing,
  );
  await assert.rejects(async () => {
    for await (const _ of failing.chatStream(chatRequest(), callContext())) { /* read */ }
  });
  // Left by its consumer after the client went away.
  const call = callContext();
  for await (
    const _ of tracedProvider(streaming(events), config, tracing).chatStream(chatRequest(), call)
  ) {
    call.abort.abort();
    break;
  }
  assert.deepEqual(
    spans.map((s) => [s.ended, s.attributes["error.type"] ?? null, s.status?.code ?? null]),
    [
      [1, null, null],
      [1, "upstream_error", 2],
      [1, "client_disconnected", 2],
    ],
  );
  assert.equal(spans[0]!.attributes["gen_ai.usage.output_tokens"], 2n);
  assert.equal(
    spans[0]!.attributes["gen_ai.input.messages"],
    JSON.stringify([{ role: "user", parts: [{ type: "text", content: "Hello there" }] }]),
  );
  assert.equal(
    spans[0]!.attributes["gen_ai.output.messages"],
    JSON.stringify([{
      role: "assistant",
      parts: [{ type: "text", content: "Hello world" }],
      finish_reason: "stop",
    }]),
  );
});

Deno.test("tracedProvider: keeps every optional call of the provider it wraps, and only those", async () => {
  const calls: string[] = [];
  const full: Provider = {
    ...streaming([]),
    moderate: () => (calls.push("moderate"), Promise.resolve([])),
    embed: () => (calls.push("embed"), Promise.resolve({ embeddings: [], promptTokens: 0 })),
    rerank: () => (calls.push("rerank"), Promise.resolve({ scores: [], tokens: 0 })),
    generateImages: () => (calls.push("generateImages"), Promise.resolve([])),
    passes: new Set(["anthropic_messages"]),
    countTokens: () => (calls.push("countTokens"), Promise.resolve(7)),
    passthrough: () => (calls.push("passthrough"), Promise.reject(new Error("unused"))),
    listModels: () => (calls.push("listModels"), Promise.resolve([])),
  };
  const optional = [
    "moderate",
    "embed",
    "rerank",
    "generateImages",
    "countTokens",
    "passthrough",
    "listModels",
  ] as const;
  const tracing = new Tracing(recordingOtel().api, false);
  const traced = tracedProvider(full, config, tracing);
  for (const name of optional) assert.equal(typeof traced[name], "function", name);
  assert.equal(await traced.countTokens!(chatRequest(), callContext()), 7);
  assert.deepEqual(calls, ["countTokens"]);
  assert.deepEqual(traced.passes, full.passes, "the protocols it passes through too");
  const bare = tracedProvider(streaming([]), config, tracing);
  for (const name of optional) assert.equal(bare[name], undefined, name);
  assert.equal(bare.passes, undefined);
});

Deno.test("tracedProvider: an embeddings call is one CLIENT span with the embeddings operation and its input tokens", async () => {
  const { api, spans, points } = recordingOtel();
  const inner: Provider = {
    ...streaming([]),
    embed: () => Promise.resolve({ embeddings: [[0.1, 0.2]], promptTokens: 7 }),
  };
  const provider = tracedProvider(inner, config, new Tracing(api, true));
  const request = {
    model: "m",
    input: ["a secret text"],
    encoding_format: "float" as const,
    dimensions: null,
    user: null,
    task_type: null,
  };
  const result = await provider.embed!(request, callContext());
  assert.equal(result.promptTokens, 7);
  assert.equal(spans.length, 1);
  const [span] = spans;
  assert.equal(span!.name, "embeddings upstream-model-v1");
  assert.equal(span!.kind, 2);
  assert.equal(span!.ended, 1);
  assert.equal(span!.attributes["gen_ai.operation.name"], "embeddings");
  assert.equal(span!.attributes["gen_ai.usage.input_tokens"], 7n);
  assert.equal(span!.attributes["gen_ai.request.max_tokens"], undefined);
  assert.equal(span!.attributes["gen_ai.input.messages"], undefined, "no content, even when on");
  assert.equal(span!.attributes["gen_ai.output.messages"], undefined);
  assert.ok(points.some((p) => p.name === "gen_ai.client.token.usage" && p.value === 7));

  const failing = tracedProvider(
    { ...inner, embed: () => Promise.reject(upstreamError("down")) },
    config,
    new Tracing(api, false),
  );
  await assert.rejects(() => failing.embed!(request, callContext()));
  assert.equal(spans[1]!.ended, 1);
  assert.equal(spans[1]!.attributes["error.type"], "upstream_error");
});
