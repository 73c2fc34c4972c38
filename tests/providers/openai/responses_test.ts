import assert from "node:assert/strict";
import { OpenAIProvider } from "../../../src/providers/openai/provider.ts";
import type { SseEvent } from "../../../src/http/sse.ts";
import { startFakeOpenAIResponses } from "../../support/fake_openai_responses.ts";
import { callContext, providerDeps } from "../../support/provider_call.ts";

Deno.test("only a provider with responses_api passes the Responses API through", async () => {
  await using fake = startFakeOpenAIResponses();
  const plain = new OpenAIProvider(providerDeps("openai", `${fake.url}/v1`, fake.apiKey));
  assert.equal(plain.responses, undefined);
  const deps = providerDeps("openai", `${fake.url}/v1`, fake.apiKey, { responses_api: true });
  const provider = new OpenAIProvider(deps);
  const body = { model: "smart", input: "Hello there", include: ["reasoning.encrypted_content"] };
  const call = callContext();
  const answer = await provider.responses!(body, call);
  assert.equal(answer.kind, "json");
  assert.equal(fake.last.path, "/v1/responses");
  assert.deepEqual(
    fake.last.body,
    { ...body, model: call.upstreamModel },
    "the body goes as given, with the upstream's model id",
  );
  assert.equal(fake.last.headers.get("authorization"), `Bearer ${fake.apiKey}`);
  if (answer.kind === "json") assert.equal(answer.body.object, "response");
});

Deno.test("a streamed answer's events arrive whole across split reads", async () => {
  await using fake = startFakeOpenAIResponses({ sliceBytes: 5 });
  const deps = providerDeps("openai", `${fake.url}/v1`, fake.apiKey, { responses_api: true });
  const provider = new OpenAIProvider(deps);
  const answer = await provider.responses!(
    { model: "gpt-up", input: "Hello there", stream: true },
    callContext(),
  );
  assert.equal(answer.kind, "stream");
  if (answer.kind !== "stream") return;
  const events: SseEvent[] = [];
  for (let read = await answer.events.readEvents(); read !== null;) {
    events.push(...read);
    read = await answer.events.readEvents();
  }
  answer.events.close();
  const types = events.map((e) => e.event);
  assert.equal(types[0], "response.created");
  assert.equal(types.at(-1), "response.completed");
  for (const e of events) assert.equal(JSON.parse(e.data).type, e.event);
});

Deno.test("an upstream error is the gateway's error in OpenAI's shape", async () => {
  await using fake = startFakeOpenAIResponses();
  fake.faults.push({ status: 400, errorType: "invalid_request_error", message: "bad input" });
  const deps = providerDeps("openai", `${fake.url}/v1`, fake.apiKey, { responses_api: true });
  const provider = new OpenAIProvider(deps);
  await assert.rejects(
    () => provider.responses!({ model: "gpt-up", input: "x" }, callContext()),
    (e: Error & { status?: number }) => e.status === 400 && /bad input/.test(e.message),
  );
});
