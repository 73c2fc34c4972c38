/** The fake Gemini upstream itself: it refuses what Gemini refuses (so the adapter tests that
 * pass against it mean something), and speaks Gemini's stream framing. */
import assert from "node:assert/strict";
import { geminiSignature, SKIP_SIGNATURE, startFakeGemini } from "../../support/fake_gemini.ts";

const MODEL = "gemini-3-pro";

async function send(
  fake: ReturnType<typeof startFakeGemini>,
  body: unknown,
  method = "generateContent",
  key = fake.apiKey,
) {
  const response = await fetch(`${fake.url}/v1beta/models/${MODEL}:${method}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-goog-api-key": key },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

const ask = { role: "user", parts: [{ text: "Use f" }] };
const args = { city: "x" };
const called = (signature?: string) => ({
  role: "model",
  parts: [{
    functionCall: { id: "call_1", name: "f", args },
    ...(signature !== undefined ? { thoughtSignature: signature } : {}),
  }],
});
const answered = {
  role: "user",
  parts: [{ functionResponse: { id: "call_1", name: "f", response: { output: "ok" } } }],
};

Deno.test("fake gemini: refuses what Gemini refuses", async () => {
  await using fake = startFakeGemini();
  const good = geminiSignature(MODEL, `call\nf\n${JSON.stringify(args)}`);
  const rows: [unknown, RegExp | null][] = [
    [{ contents: [ask, called(good), answered] }, null],
    [{ contents: [ask, called(SKIP_SIGNATURE), answered] }, null],
    [{ contents: [ask, called(), answered] }, /missing a thought_signature/],
    [{ contents: [ask, called("Zm9yZ2Vk"), answered] }, /Thought signature is not valid/],
    [
      { contents: [ask, called(good), { role: "user", parts: [{ text: "no" }] }] },
      /number of function response parts/,
    ],
    [{ contents: [ask], generationConfig: { max_tokens: 5 } }, /Unknown name "max_tokens"/],
    [{ contents: [{ role: "assistant", parts: [{ text: "x" }] }] }, /role/],
    [{
      contents: [{
        role: "user",
        parts: [{ text: "x", inlineData: { mimeType: "image/png", data: "" } }],
      }],
    }, /exactly one data field/],
    [{
      contents: [ask],
      tools: [{ functionDeclarations: [{ name: "f", parametersJsonSchema: { $schema: "x" } }] }],
    }, /unsupported JSON Schema keyword "\$schema"/],
    [{
      contents: [ask],
      generationConfig: { thinkingConfig: { thinkingBudget: 1, thinkingLevel: "LOW" } },
    }, /cannot be used together/],
  ];
  for (const [body, refused] of rows) {
    const { status, text } = await send(fake, body);
    if (refused === null) assert.equal(status, 200, text);
    else {
      assert.equal(status, 400, JSON.stringify(body));
      assert.match(JSON.parse(text).error.message, refused);
      assert.equal(JSON.parse(text).error.status, "INVALID_ARGUMENT");
    }
  }
  const bad = await send(fake, { contents: [ask] }, "generateContent", "AIza-wrong");
  assert.equal(bad.status, 400);
  assert.equal(JSON.parse(bad.text).error.details[0].reason, "API_KEY_INVALID");
});

Deno.test("fake gemini: streams data frames split by CRLF blank lines, no end marker", async () => {
  await using fake = startFakeGemini();
  const { status, text } = await send(
    fake,
    { contents: [{ role: "user", parts: [{ text: "Hi" }] }] },
    "streamGenerateContent?alt=sse",
  );
  assert.equal(status, 200);
  const frames = text.split("\r\n\r\n");
  assert.equal(frames.pop(), "");
  assert.ok(frames.length >= 2);
  const last = JSON.parse(frames.at(-1)!.replace(/^data: /, ""));
  assert.equal(last.candidates[0].finishReason, "STOP");
  assert.equal(last.usageMetadata.candidatesTokenCount, 3);
  assert.ok(!text.includes("[DONE]"));
});
