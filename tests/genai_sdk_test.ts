/**
 * The Gemini front door driven by Google's own `@google/genai` SDK over a real port, against
 * every back end side by side: the simulator, and models behind the fake OpenAI-style and
 * Anthropic-style upstreams (through the canonical model) and behind the fake Gemini upstream
 * (whose requests must follow Gemini's documented format): `models.generateContent`,
 * `generateContentStream`, `countTokens`, `models.list` and `models.get`, function calling
 * with the call's result sent back, `chats`, and the SDK on `/v1` as well as `/v1beta`.
 */
import assert from "node:assert/strict";
import type { Content, GenerateContentResponse, Tool } from "npm:@google/genai@3.3.0";
import { type Backend, BACKENDS, startGenaiGateway } from "./support/genai_gateway.ts";

const WEATHER: Tool = {
  functionDeclarations: [{
    name: "get_weather",
    description: "The weather in a city.",
    parametersJsonSchema: {
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
    },
  }],
};

function checkFake(gateway: Awaited<ReturnType<typeof startGenaiGateway>>, backend: Backend) {
  const fake = gateway.fakeOf(backend);
  if (fake) assert.deepEqual(fake.violations, []);
}

for (const backend of BACKENDS) {
  Deno.test(`genai/${backend.name}: models.generateContent answers one candidate under the gateway's model`, async () => {
    await using gateway = await startGenaiGateway();
    const response = await gateway.client().models.generateContent({
      model: backend.model,
      contents: "Hello there",
      config: { systemInstruction: "You are terse.", temperature: 0.5, maxOutputTokens: 200 },
    });
    assert.match(response.text ?? "", /Hello there/);
    assert.equal(response.candidates?.length, 1);
    assert.equal(response.candidates?.[0]?.content?.role, "model");
    assert.equal(response.candidates?.[0]?.finishReason, "STOP");
    assert.equal(response.modelVersion, backend.model);
    assert.ok(response.responseId);
    const usage = response.usageMetadata!;
    assert.ok(usage.promptTokenCount! > 0 && usage.candidatesTokenCount! > 0);
    assert.equal(
      usage.totalTokenCount,
      usage.promptTokenCount! + usage.candidatesTokenCount! + (usage.thoughtsTokenCount ?? 0),
    );
    checkFake(gateway, backend);
  });

  Deno.test(`genai/${backend.name}: generateContentStream streams the text and ends with the finish and usage`, async () => {
    await using gateway = await startGenaiGateway();
    const stream = await gateway.client().models.generateContentStream({
      model: backend.model,
      contents: "Hello there",
    });
    const chunks: GenerateContentResponse[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.ok(chunks.length >= 1);
    assert.match(chunks.map((c) => c.text ?? "").join(""), /Hello there/);
    const last = chunks.at(-1)!;
    assert.equal(last.candidates?.[0]?.finishReason, "STOP");
    assert.ok(last.usageMetadata!.candidatesTokenCount! > 0);
    for (const chunk of chunks) {
      assert.equal(chunk.modelVersion, backend.model);
      assert.equal(chunk.responseId, chunks[0]!.responseId);
    }
    checkFake(gateway, backend);
  });

  Deno.test(`genai/${backend.name}: countTokens counts the prompt`, async () => {
    await using gateway = await startGenaiGateway();
    const counted = await gateway.client().models.countTokens({
      model: backend.model,
      contents: "Count these words for me please",
    });
    assert.ok(counted.totalTokens! > 0);
  });

  Deno.test(`genai/${backend.name}: a function call, its result sent back, then the answer`, async () => {
    await using gateway = await startGenaiGateway();
    const ai = gateway.client();
    const ask: Content = {
      role: "user",
      parts: [{ text: "Tell me the weather in Paris with get_weather." }],
    };
    const first = await ai.models.generateContent({
      model: backend.model,
      contents: [ask],
      config: { tools: [WEATHER] },
    });
    const calls = first.functionCalls ?? [];
    assert.ok(calls.length >= 1, JSON.stringify(first));
    assert.equal(calls[0]!.name, "get_weather");
    assert.equal(typeof calls[0]!.args?.city, "string");
    const results: Content = {
      role: "user",
      parts: calls.map((call) => ({
        functionResponse: {
          ...(call.id ? { id: call.id } : {}),
          name: call.name!,
          response: { output: "sunny, 24 degrees" },
        },
      })),
    };
    const second = await ai.models.generateContent({
      model: backend.model,
      contents: [ask, first.candidates![0]!.content!, results],
      config: { tools: [WEATHER] },
    });
    assert.equal(second.functionCalls, undefined);
    assert.ok((second.text ?? "").length > 0);
    assert.equal(second.candidates?.[0]?.finishReason, "STOP");
    checkFake(gateway, backend);
  });

  Deno.test(`genai/${backend.name}: chats keep the history across turns, streamed or not`, async () => {
    await using gateway = await startGenaiGateway();
    const chat = gateway.client().chats.create({ model: backend.model });
    const one = await chat.sendMessage({ message: "Hello there" });
    assert.match(one.text ?? "", /Hello there/);
    let streamed = "";
    for await (const chunk of await chat.sendMessageStream({ message: "And again" })) {
      streamed += chunk.text ?? "";
    }
    assert.match(streamed, /And again/);
    // The SDK keeps a streamed answer as one model content per chunk, as it does with Gemini's.
    const roles = chat.getHistory().map((c) => c.role);
    assert.deepEqual(roles.slice(0, 3), ["user", "model", "user"]);
    assert.ok(roles.slice(3).length >= 1 && roles.slice(3).every((r) => r === "model"));
    const three = await chat.sendMessage({ message: "Once more" });
    assert.match(three.text ?? "", /Once more/);
    checkFake(gateway, backend);
  });
}

Deno.test("genai: models.list and models.get show what the caller may use, in Gemini's shape", async () => {
  await using gateway = await startGenaiGateway();
  const ai = gateway.client();
  const names: string[] = [];
  for await (const model of await ai.models.list()) names.push(model.name!);
  for (const backend of BACKENDS) {
    assert.ok(names.includes(`models/${backend.model}`), names.join());
  }
  assert.ok(!names.includes("models/sim-image"), "a preview model is hidden from a plain key");
  const model = await ai.models.get({ model: "sim-vision" });
  assert.equal(model.name, "models/sim-vision");
  assert.deepEqual(model.supportedActions, [
    "generateContent",
    "streamGenerateContent",
    "countTokens",
  ]);
  await assert.rejects(ai.models.get({ model: "sim-image" }), /404|not exist/);
});

Deno.test("genai: the SDK on /v1 (apiVersion v1) reaches the same door", async () => {
  await using gateway = await startGenaiGateway();
  const ai = gateway.client({ apiVersion: "v1" });
  const response = await ai.models.generateContent({ model: "sim-vision", contents: "Hello" });
  assert.match(response.text ?? "", /Hello/);
  const names: string[] = [];
  for await (const model of await ai.models.list()) names.push(model.name!);
  assert.ok(names.includes("models/sim-vision"));
  const counted = await ai.models.countTokens({ model: "sim-vision", contents: "Hello" });
  assert.ok(counted.totalTokens! > 0);
});

Deno.test("genai: a wrong key is a 401 in Google's error shape", async () => {
  await using gateway = await startGenaiGateway();
  const ai = gateway.client({ apiKey: "sk-sy-00000000000000000000000000000000" });
  const error = await ai.models.generateContent({ model: "sim-vision", contents: "Hi" }).then(
    () => null,
    (e: unknown) => e as Error & { status?: number },
  );
  assert.ok(error);
  assert.equal(error.status, 401);
  const body = JSON.parse(error.message.slice(error.message.indexOf("{")));
  assert.equal(body.error.code, 401);
  assert.equal(body.error.status, "UNAUTHENTICATED");
  assert.match(body.error.message, /API key/);
});
