import assert from "node:assert/strict";
import { parseCountTokensRequest, parseGeminiRequest } from "../../../src/api/gemini/request.ts";
import { noUses } from "../../../src/canonical/uses.ts";
import { ApiError } from "../../../src/errors.ts";
import { dataUrl, pngBytes } from "../../support/images.ts";

const CALL = { model: "gw-model", stream: false };
const PDF_BASE64 = new TextEncoder().encode("%PDF-1.4\n%%EOF\n").toBase64();

function parse(body: Record<string, unknown>) {
  return parseGeminiRequest(body, CALL);
}

/** The 400 a body is refused with. */
function refusal(body: Record<string, unknown>): { param: string | null; message: string } {
  try {
    parse(body);
  } catch (e) {
    if (e instanceof ApiError) return { param: e.param, message: e.toGeminiBody().error.message };
    throw e;
  }
  throw new Error("accepted");
}

Deno.test("gemini request: contents, systemInstruction and generationConfig as canonical", () => {
  const { req, uses, includeThoughts } = parse({
    systemInstruction: { parts: [{ text: "Be terse." }] },
    contents: [
      { role: "user", parts: [{ text: "Hi" }] },
      { role: "model", parts: [{ text: "Hello" }] },
      { parts: [{ text: "Again" }] },
    ],
    generationConfig: {
      temperature: 0.5,
      topP: 0.9,
      topK: 40,
      maxOutputTokens: 100,
      stopSequences: ["END"],
      candidateCount: 1,
      seed: 7,
      thinkingConfig: { thinkingBudget: 2048, includeThoughts: true },
      responseModalities: ["TEXT"],
    },
    safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
  });
  assert.equal(req.model, "gw-model");
  assert.deepEqual(req.messages, [
    { role: "system", parts: [{ type: "text", text: "Be terse." }] },
    { role: "user", parts: [{ type: "text", text: "Hi" }] },
    { role: "assistant", parts: [{ type: "text", text: "Hello" }] },
    { role: "user", parts: [{ type: "text", text: "Again" }] },
  ]);
  const o = req.options;
  assert.equal(o.maxTokens, 100);
  assert.equal(o.maxTokensGiven, true);
  assert.equal(o.temperature, 0.5);
  assert.equal(o.topP, 0.9);
  assert.equal(o.topK, 40);
  assert.equal(o.seed, 7);
  assert.deepEqual(o.stop, ["END"]);
  assert.deepEqual(o.reasoning, { budgetTokens: 2048 });
  assert.equal(includeThoughts, true);
  assert.deepEqual(req.extras, {
    protocol: "gemini_generate",
    fields: {
      safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
      generationConfig: { responseModalities: ["TEXT"] },
    },
  });
  assert.deepEqual(uses, noUses());
});

Deno.test("gemini request: function calls, their responses and thought signatures", () => {
  const { req, uses } = parse({
    contents: [
      { role: "user", parts: [{ text: "Weather in Paris and Rome?" }] },
      {
        role: "model",
        parts: [
          { text: "Let me look.", thought: true, thoughtSignature: "c2lnMQ==" },
          {
            functionCall: { name: "get_weather", args: { city: "Paris" } },
            thoughtSignature: "c2lnMg==",
          },
          { functionCall: { id: "r1", name: "get_weather", args: { city: "Rome" } } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { id: "r1", name: "get_weather", response: { output: "rain" } } },
          { functionResponse: { name: "get_weather", response: { temp: 24 } } },
        ],
      },
    ],
  });
  assert.deepEqual(req.messages[1], {
    role: "assistant",
    parts: [
      { type: "reasoning", text: "Let me look.", style: "gemini", signature: "c2lnMQ==" },
      { type: "tool_call", id: "call_1_1", name: "get_weather", arguments: '{"city":"Paris"}' },
      { type: "reasoning", text: "", signature: "c2lnMg==", style: "gemini" },
      { type: "tool_call", id: "r1", name: "get_weather", arguments: '{"city":"Rome"}' },
    ],
  });
  assert.deepEqual(req.messages[2], {
    role: "user",
    parts: [
      {
        type: "tool_result",
        callId: "r1",
        content: [{ type: "text", text: "rain" }],
        isError: false,
      },
      {
        type: "tool_result",
        callId: "call_1_1",
        content: [{ type: "text", text: '{"temp":24}' }],
        isError: false,
      },
    ],
  });
  assert.deepEqual(uses.toolUses, [
    "contents[1].parts[1]",
    "contents[1].parts[2]",
    "contents[2].parts[0]",
    "contents[2].parts[1]",
  ]);
});

Deno.test("gemini request: tools, parameters in Gemini's Schema, toolConfig", () => {
  const { req } = parse({
    contents: [{ parts: [{ text: "hi" }] }],
    tools: [{
      functionDeclarations: [
        {
          name: "a",
          description: "A.",
          parameters: {
            type: "OBJECT",
            properties: { n: { type: "INTEGER", nullable: true } },
            propertyOrdering: ["n"],
          },
        },
        { name: "b", parametersJsonSchema: { type: "object", properties: {} } },
      ],
    }],
    toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["b"] } },
  });
  assert.deepEqual(req.options.tools, [
    {
      name: "a",
      description: "A.",
      parameters: { type: "object", properties: { n: { type: ["integer", "null"] } } },
    },
    { name: "b", parameters: { type: "object", properties: {} } },
  ]);
  assert.deepEqual(req.options.toolChoice, { name: "b" });
});

Deno.test("gemini request: JSON output with a schema", () => {
  const { req } = parse({
    contents: [{ parts: [{ text: "hi" }] }],
    generationConfig: {
      responseMimeType: "application/json",
      responseSchema: { type: "OBJECT", properties: { a: { type: "STRING" } } },
    },
  });
  assert.deepEqual(req.options.output, {
    type: "json_schema",
    name: "response",
    schema: { type: "object", properties: { a: { type: "string" } } },
    strict: false,
  });
});

Deno.test("gemini request: an inline image is checked and decoded; other data is Gemini's only", () => {
  const data = dataUrl("image/png", pngBytes(2, 2)).split(",")[1]!;
  const { req, uses } = parse({
    contents: [{
      parts: [
        { inlineData: { mimeType: "image/png", data } },
        { inlineData: { mimeType: "audio/mpeg", data: "SUQz" } },
      ],
    }],
  });
  assert.deepEqual(req.messages[0]!.parts, [
    { type: "image", source: { kind: "data", mediaType: "image/png", base64: data } },
  ]);
  assert.deepEqual(uses.images, ["contents[0].parts[0]"]);
  assert.deepEqual(uses.protocolOnly, [
    { path: "contents[0].parts[1].inlineData.mimeType", type: "audio/mpeg" },
  ]);
});

Deno.test("gemini request: inline PDFs and text, and PDFs by https:// URL, are documents", () => {
  const { req, uses } = parse({
    contents: [{
      parts: [
        { text: "Read these." },
        { inlineData: { mimeType: "application/pdf", data: PDF_BASE64 } },
        { inlineData: { mimeType: "text/plain", data: btoa("notes") } },
        { fileData: { mimeType: "application/pdf", fileUri: "https://example.com/a.pdf" } },
        { fileData: { mimeType: "application/pdf", fileUri: "gs://bucket/a.pdf" } },
      ],
    }],
  });
  assert.deepEqual(req.messages[0]!.parts, [
    { type: "text", text: "Read these." },
    {
      type: "document",
      source: { kind: "data", mediaType: "application/pdf", base64: PDF_BASE64, pages: 1 },
    },
    { type: "document", source: { kind: "text", text: "notes" } },
    { type: "document", source: { kind: "url", url: "https://example.com/a.pdf" } },
  ]);
  assert.deepEqual(uses.documents, ["contents[0].parts[1]", "contents[0].parts[3]"]);
  assert.deepEqual(uses.protocolOnly, [{
    path: "contents[0].parts[4].fileData",
    type: "fileData",
  }]);
});

Deno.test("gemini request: a bad inline document is a 400 naming its data", () => {
  const inline = (mimeType: string, data: string) =>
    refusal({ contents: [{ parts: [{ inlineData: { mimeType, data } }] }] });
  const at = "contents[0].parts[0].inlineData.data";
  for (
    const [mimeType, data, words] of [
      ["application/pdf", "%%%%", /not valid base64/],
      ["application/pdf", "", /empty string/],
      ["application/pdf", btoa("no pdf"), /%PDF-/],
      ["text/plain", "%%%%", /not valid base64/],
      ["text/plain", new Uint8Array([0xff, 0xfe, 0xfd]).toBase64(), /UTF-8/],
    ] as const
  ) {
    const { param, message } = inline(mimeType, data);
    assert.equal(param, at, `${mimeType} ${data}`);
    assert.match(message, words);
  }
});

Deno.test("gemini request: each mistake is a 400 naming its field", () => {
  assert.deepEqual(refusal({}), {
    param: "contents",
    message: "contents: missing required parameter",
  });
  assert.equal(
    refusal({ contents: [{ role: "system", parts: [{ text: "x" }] }] }).param,
    "contents[0].role",
  );
  assert.equal(refusal({ contents: [{ parts: [] }] }).param, "contents[0].parts");
  assert.equal(
    refusal({ contents: [{ parts: [{ text: "x" }] }], generationConfig: { temperature: 3 } })
      .param,
    "generationConfig.temperature",
  );
  assert.equal(
    refusal({
      contents: [{ parts: [{ functionResponse: { name: "f", response: {} } }] }],
    }).param,
    "contents[0].parts[0].functionResponse",
  );
  assert.equal(
    refusal({
      contents: [{ parts: [{ text: "x" }] }],
      generationConfig: { responseSchema: { type: "OBJECT" } },
    }).param,
    "generationConfig.responseMimeType",
  );
  assert.equal(
    refusal({
      contents: [{ parts: [{ inlineData: { mimeType: "image/png", data: "bm90IGFuIGltYWdl" } }] }],
    }).param,
    "contents[0].parts[0].inlineData.data",
  );
});

Deno.test("gemini countTokens: contents, or a whole generateContentRequest", () => {
  const plain = parseCountTokensRequest({ contents: [{ parts: [{ text: "hi" }] }] }, "m");
  assert.deepEqual(plain.req.messages, [{ role: "user", parts: [{ type: "text", text: "hi" }] }]);
  const whole = parseCountTokensRequest({
    generateContentRequest: {
      model: "models/m",
      contents: [{ parts: [{ text: "hi" }] }],
      systemInstruction: { parts: [{ text: "sys" }] },
    },
  }, "m");
  assert.equal(whole.req.messages.length, 2);
});

Deno.test("countTokens counts a functionResponse alone (the Gemini CLI counts a tool's output); generateContent refuses it", () => {
  const contents = [{
    role: "user",
    parts: [
      {
        functionResponse: {
          id: "read_file__call_1",
          name: "read_file",
          response: { output: "Binary content provided (1 item(s))." },
        },
      },
      { inlineData: { mimeType: "application/pdf", data: "JVBERi0xLjQK" } },
    ],
  }];
  const { req } = parseCountTokensRequest({ contents }, "m");
  assert.deepEqual(req.messages, [{
    role: "user",
    parts: [
      {
        type: "text",
        text: JSON.stringify({
          name: "read_file",
          response: { output: "Binary content provided (1 item(s))." },
        }),
      },
      {
        type: "document",
        source: { kind: "data", mediaType: "application/pdf", base64: "JVBERi0xLjQK", pages: 1 },
      },
    ],
  }]);
  assert.throws(
    () => parseGeminiRequest({ contents }, { model: "m", stream: false }),
    (e) => e instanceof ApiError && e.param === "contents[0].parts[0].functionResponse",
  );
});

Deno.test("a functionResponse's parts (Gemini 3's multimodal responses) are its result's images and documents", () => {
  const png = dataUrl("image/png", pngBytes(2, 2)).split(",")[1]!;
  const { req, uses } = parseGeminiRequest({
    contents: [
      { role: "user", parts: [{ text: "Read it." }] },
      { role: "model", parts: [{ functionCall: { id: "c1", name: "read", args: {} } }] },
      {
        role: "user",
        parts: [{
          functionResponse: {
            id: "c1",
            name: "read",
            response: { output: "two files" },
            parts: [
              {
                inlineData: {
                  mimeType: "application/pdf",
                  data: "JVBERi0xLjQK",
                  displayName: "q3.pdf",
                },
              },
              { inlineData: { mimeType: "image/png", data: png } },
              { inlineData: { mimeType: "audio/mpeg", data: "AAAA" } },
            ],
          },
        }],
      },
    ],
  }, { model: "m", stream: false });
  const result = req.messages[2]!.parts[0]!;
  assert.equal(result.type, "tool_result");
  if (result.type !== "tool_result") return;
  assert.deepEqual(result.content.map((p) => p.type), ["text", "document", "image"]);
  assert.deepEqual(result.content[1], {
    type: "document",
    source: { kind: "data", mediaType: "application/pdf", base64: "JVBERi0xLjQK", pages: 1 },
    title: "q3.pdf",
  });
  assert.deepEqual(uses.documents, ["contents[2].parts[0].functionResponse.parts[0]"]);
  assert.deepEqual(uses.images, ["contents[2].parts[0].functionResponse.parts[1]"]);
  assert.deepEqual(uses.protocolOnly, [{
    path: "contents[2].parts[0].functionResponse.parts[2].inlineData.mimeType",
    type: "audio/mpeg",
  }]);
});
