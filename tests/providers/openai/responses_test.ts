import assert from "node:assert/strict";
import { OpenAIProvider } from "../../../src/providers/openai/provider.ts";
import type { PassthroughCall } from "../../../src/providers/types.ts";
import { startFakeOpenAIResponses } from "../../support/fake_openai_responses.ts";
import { callContext, providerDeps } from "../../support/provider_call.ts";

/** A Responses call passed through with `body`, its answer shown with the gateway's model. */
function responsesCall(body: Record<string, unknown>): PassthroughCall {
  return {
    protocol: "openai_responses",
    endpoint: "responses",
    body,
    headers: {},
    shown: { model: "smart", previous_response_id: "resp_client" },
  };
}

Deno.test("only a provider with responses_api passes the Responses API through", async () => {
  await using fake = startFakeOpenAIResponses();
  const plain = new OpenAIProvider(providerDeps("openai", `${fake.url}/v1`, fake.apiKey));
  assert.equal(plain.passes.has("openai_responses"), false);
  await assert.rejects(() => plain.passthrough(responsesCall({ input: "x" }), callContext()));
  const deps = providerDeps("openai", `${fake.url}/v1`, fake.apiKey, { responses_api: true });
  const provider = new OpenAIProvider(deps);
  const body = { model: "smart", input: "Hello there", include: ["reasoning.encrypted_content"] };
  const call = callContext();
  assert.equal(provider.passes.has("openai_responses"), true);
  const answer = await provider.passthrough(responsesCall(body), call);
  assert.equal(answer.kind, "json");
  assert.equal(fake.last.path, "/v1/responses");
  assert.deepEqual(
    fake.last.body,
    { ...body, model: call.upstreamModel },
    "the body goes as given, with the upstream's model id",
  );
  assert.equal(fake.last.headers.get("authorization"), `Bearer ${fake.apiKey}`);
  if (answer.kind === "json") {
    assert.equal(answer.body.object, "response");
    assert.equal(answer.body.model, "smart", "the answer shows the client's fields");
    assert.equal(answer.body.previous_response_id, "resp_client");
  }
});

Deno.test("a streamed answer's events arrive whole across split reads", async () => {
  await using fake = startFakeOpenAIResponses({ sliceBytes: 5 });
  const deps = providerDeps("openai", `${fake.url}/v1`, fake.apiKey, { responses_api: true });
  const provider = new OpenAIProvider(deps);
  const answer = await provider.passthrough(
    responsesCall({ model: "gpt-up", input: "Hello there", stream: true }),
    callContext(),
  );
  assert.equal(answer.kind, "stream");
  if (answer.kind !== "stream") return;
  let text = "";
  let final: Record<string, unknown> | undefined;
  for await (const batch of answer.batches) {
    text += new TextDecoder().decode(batch.bytes);
    final ??= batch.final;
  }
  const events = text.split("\n\n").filter((e) => e !== "").map((e) => {
    const [name, data] = e.split("\n");
    return { event: name!.slice("event: ".length), data: JSON.parse(data!.slice("data: ".length)) };
  });
  const types = events.map((e) => e.event);
  assert.equal(types[0], "response.created");
  assert.equal(types.at(-1), "response.completed");
  for (const e of events) {
    assert.equal(e.data.type, e.event);
    if (e.data.response) assert.equal(e.data.response.model, "smart");
  }
  assert.equal(final?.status, "completed", "the final Response is handed over for storing");
});

Deno.test("an upstream error is the gateway's error in OpenAI's shape", async () => {
  await using fake = startFakeOpenAIResponses();
  fake.faults.push({ status: 400, errorType: "invalid_request_error", message: "bad input" });
  const deps = providerDeps("openai", `${fake.url}/v1`, fake.apiKey, { responses_api: true });
  const provider = new OpenAIProvider(deps);
  await assert.rejects(
    () => provider.passthrough(responsesCall({ model: "gpt-up", input: "x" }), callContext()),
    (e: Error & { status?: number }) => e.status === 400 && /bad input/.test(e.message),
  );
});
