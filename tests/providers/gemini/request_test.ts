import assert from "node:assert/strict";
import type {
  Message,
  Options,
  ToolResultPart,
  ToolSpec,
} from "../../../src/canonical/conversation.ts";
import { canonicalCallId } from "../../../src/providers/gemini/call_ids.ts";
import { SKIP_SIGNATURE } from "../../../src/providers/gemini/contents.ts";
import { toGeminiRequest } from "../../../src/providers/gemini/request.ts";
import type { GenerateContentRequest } from "../../../src/providers/gemini/types.ts";
import { chatRequest } from "../../support/provider_call.ts";
import { dataUrl, gifBytes, pngBytes } from "../../support/images.ts";
import { gatewayError } from "../../support/rejection.ts";

const PNG_1x1 = dataUrl("image/png", pngBytes(1, 1)).split(",")[1]!;
const GIF_1x1 = dataUrl("image/gif", gifBytes(1, 1)).split(",")[1]!;

const WEATHER: ToolSpec = {
  name: "get_weather",
  description: "Weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

const user = (text: string): Message => ({ role: "user", parts: [{ type: "text", text }] });
const result = (callId: string, text: string, isError = false): Message => ({
  role: "tool",
  parts: [{ type: "tool_result", callId, content: [{ type: "text", text }], isError }],
});
const call = (id: string, city: string) =>
  ({ type: "tool_call", id, name: "get_weather", arguments: `{"city":"${city}"}` }) as const;

function body(
  options: Partial<Options> = {},
  messages?: Message[],
  dropped = new Set<string>(),
): GenerateContentRequest {
  return toGeminiRequest(chatRequest(messages ? { messages } : {}, options), dropped);
}

function droppedBy(options: Partial<Options>, messages?: Message[]): string[] {
  const dropped = new Set<string>();
  body(options, messages, dropped);
  return [...dropped].sort();
}

Deno.test("gemini request: system and developer text hoisted; turns merged by role", () => {
  const got = body({}, [
    { role: "system", parts: [{ type: "text", text: "Be brief." }] },
    user("one"),
    { role: "developer", parts: [{ type: "text", text: "Answer in French." }] },
    user("two"),
    { role: "assistant", parts: [{ type: "text", text: "trois" }, { type: "text", text: "  " }] },
  ]);
  assert.deepEqual(got, {
    systemInstruction: { parts: [{ text: "Be brief." }, { text: "Answer in French." }] },
    contents: [
      { role: "user", parts: [{ text: "one" }, { text: "two" }] },
      { role: "model", parts: [{ text: "trois" }] },
    ],
  });
});

Deno.test("gemini request: generation options by Gemini's names; the rest dropped and named", () => {
  const dropped = new Set<string>();
  const got = body(
    {
      maxTokens: 100,
      maxTokensGiven: true,
      temperature: 1.5,
      topP: 0.9,
      topK: 40,
      stop: ["END"],
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
      user: "u-1",
      metadata: { a: "b" },
    },
    undefined,
    dropped,
  );
  assert.deepEqual(got.generationConfig, {
    maxOutputTokens: 100,
    temperature: 1.5,
    topP: 0.9,
    topK: 40,
    stopSequences: ["END"],
    seed: 7,
    presencePenalty: 0.5,
    frequencyPenalty: -0.5,
  });
  assert.deepEqual([...dropped].sort(), ["metadata", "user"]);
  // A limit the caller did not give is Gemini's own.
  assert.equal(body({ maxTokens: 256, maxTokensGiven: false }).generationConfig, undefined);
});

Deno.test("gemini request: extra fields of another protocol are dropped and named", () => {
  const dropped = new Set<string>();
  const req = chatRequest({
    extras: { protocol: "openai_chat", fields: { logprobs: true, service_tier: "flex" } },
  });
  toGeminiRequest(req, dropped);
  assert.deepEqual([...dropped].sort(), ["logprobs", "service_tier"]);
});

Deno.test("gemini request: JSON answers as responseMimeType and responseJsonSchema", () => {
  assert.deepEqual(body({ output: { type: "json" } }).generationConfig, {
    responseMimeType: "application/json",
  });
  const schema = {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: { n: { type: "integer", const: 3 } },
    required: ["n"],
    additionalProperties: false,
  };
  assert.deepEqual(
    body({ output: { type: "json_schema", name: "x", schema, strict: true } }).generationConfig,
    {
      responseMimeType: "application/json",
      responseJsonSchema: {
        type: "object",
        properties: { n: { type: "integer", enum: [3] } },
        required: ["n"],
        additionalProperties: false,
      },
    },
  );
});

Deno.test("gemini request: reasoning as thinkingConfig; the budget raises maxOutputTokens", () => {
  const config = (reasoning: NonNullable<Options["reasoning"]>, more: Partial<Options> = {}) =>
    body({ reasoning, ...more }).generationConfig;
  assert.deepEqual(config({ effort: "low" }), {
    thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
  });
  assert.deepEqual(config({ effort: "high" }, { maxTokens: 100, maxTokensGiven: true }), {
    maxOutputTokens: 24676,
    thinkingConfig: { thinkingBudget: 24576, includeThoughts: true },
  });
  assert.deepEqual(config({ budgetTokens: 2000 }), {
    thinkingConfig: { thinkingBudget: 2000, includeThoughts: true },
  });
  assert.deepEqual(config({ disabled: true }), { thinkingConfig: { thinkingBudget: 0 } });
  assert.equal(config({}), undefined);
});

Deno.test("gemini request: tools as function declarations with Gemini's schema subset", () => {
  const got = body({
    tools: [
      {
        name: "lookup",
        parameters: {
          type: "object",
          properties: {
            q: { oneOf: [{ type: "string" }, { type: "null" }], default: "x" },
            tags: { type: "array", items: { type: "string" }, uniqueItems: true },
            ref: { $ref: "#/definitions/Ref" },
          },
          definitions: { Ref: { type: "string", not: { const: "" } } },
        },
        strict: true,
      },
      { name: "now" },
    ],
    toolChoice: "auto",
  });
  assert.deepEqual(got.tools, [{
    functionDeclarations: [
      {
        name: "lookup",
        parametersJsonSchema: {
          type: "object",
          properties: {
            q: { anyOf: [{ type: "string" }, { type: "null" }] },
            tags: { type: "array", items: { type: "string" } },
            ref: { $ref: "#/$defs/Ref" },
          },
          $defs: { Ref: { type: "string" } },
        },
      },
      { name: "now" },
    ],
  }]);
  assert.deepEqual(got.toolConfig, { functionCallingConfig: { mode: "AUTO" } });
  assert.deepEqual(droppedBy({ tools: [{ ...WEATHER, strict: true }] }), ["strict"]);
});

Deno.test("gemini request: tool choice as functionCallingConfig", () => {
  const config = (toolChoice: Options["toolChoice"]) =>
    body({ tools: [WEATHER], toolChoice }).toolConfig;
  assert.equal(config(null), undefined);
  assert.deepEqual(config("none"), { functionCallingConfig: { mode: "NONE" } });
  assert.deepEqual(config("required"), { functionCallingConfig: { mode: "ANY" } });
  assert.deepEqual(config({ name: "get_weather" }), {
    functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_weather"] },
  });
  assert.deepEqual(droppedBy({ tools: [WEATHER], parallelToolCalls: false }), [
    "parallel_tool_calls",
  ]);
});

Deno.test("gemini request: calls carry their id and signature; results follow the calls' order", () => {
  const signed = canonicalCallId("call_1", "c2lnbmF0dXJlIQ==");
  const got = body({ tools: [WEATHER] }, [
    user("Paris and Tokyo"),
    { role: "assistant", parts: [call(signed, "Paris"), call("swy_resp1_1", "Tokyo")] },
    result("swy_resp1_1", "25C"),
    result(signed, "no such city", true),
    user("thanks"),
  ]);
  assert.deepEqual(got.contents.slice(1), [
    {
      role: "model",
      parts: [
        {
          functionCall: { id: "call_1", name: "get_weather", args: { city: "Paris" } },
          thoughtSignature: "c2lnbmF0dXJlIQ==",
        },
        { functionCall: { name: "get_weather", args: { city: "Tokyo" } } },
      ],
    },
    {
      role: "user",
      parts: [
        {
          functionResponse: {
            id: "call_1",
            name: "get_weather",
            response: { error: "no such city" },
          },
        },
        { functionResponse: { name: "get_weather", response: { output: "25C" } } },
        { text: "thanks" },
      ],
    },
  ]);
});

Deno.test("gemini request: calls Gemini did not sign get the documented skip signature", () => {
  const got = body({ tools: [WEATHER] }, [
    user("Paris and Tokyo"),
    { role: "assistant", parts: [call("toolu_01", "Paris"), call("toolu_02", "Tokyo")] },
    result("toolu_01", "18C"),
    result("toolu_02", "25C"),
  ]);
  const parts = got.contents[1]!.parts;
  assert.equal(parts[0]!.thoughtSignature, SKIP_SIGNATURE);
  assert.equal(parts[1]!.thoughtSignature, undefined);
  assert.equal(parts[0]!.functionCall!.id, "toolu_01");
});

Deno.test("gemini request: Gemini reasoning goes back on its part; other reasoning is dropped", () => {
  const got = body({}, [
    user("hi"),
    {
      role: "assistant",
      parts: [
        { type: "reasoning", text: "Thinking…", signature: "dGhvdWdodA==", style: "gemini" },
        { type: "reasoning", text: "unsigned summary", style: "gemini" },
        { type: "reasoning", text: "Claude's", signature: "x", style: "anthropic" },
        { type: "text", text: "Hello" },
        { type: "reasoning", text: "", signature: "dGV4dA==", style: "gemini" },
      ],
    },
    {
      role: "assistant",
      parts: [
        { type: "reasoning", text: "", signature: "Zmlyc3Q=", style: "gemini" },
        { type: "refusal", text: "No." },
      ],
    },
  ]);
  assert.deepEqual(got.contents[1], {
    role: "model",
    parts: [
      { text: "Thinking…", thought: true, thoughtSignature: "dGhvdWdodA==" },
      { text: "Hello", thoughtSignature: "dGV4dA==" },
      { text: "No.", thoughtSignature: "Zmlyc3Q=" },
    ],
  });
});

Deno.test("gemini request: images inline or by an https file URL; others a 400", async () => {
  const image = (url: string, detail?: string): Message => ({
    role: "user",
    parts: [{
      type: "image",
      source: { kind: "url", url },
      ...(detail !== undefined ? { detail } : {}),
    }],
  });
  const dropped = new Set<string>();
  const got = body({}, [
    image(`data:image/png;base64,${PNG_1x1}`, "high"),
    image("https://example.com/cat.JPG?size=2"),
  ], dropped);
  assert.deepEqual(got.contents[0]!.parts, [
    { inlineData: { mimeType: "image/png", data: PNG_1x1 } },
    { fileData: { mimeType: "image/jpeg", fileUri: "https://example.com/cat.JPG?size=2" } },
  ]);
  assert.deepEqual([...dropped], ["detail"]);
  for (
    const url of [`data:image/gif;base64,${GIF_1x1}`, "https://example.com/cat", "http://x/a.png"]
  ) {
    const error = await gatewayError(() => body({}, [image(url)]));
    assert.equal(error.status, 400);
    assert.equal(error.param, "messages[0].content[0].image_url.url");
  }
});

const PDF = btoa("%PDF-1.4\n%%EOF\n");

Deno.test("gemini request: documents as inline PDF data, a PDF file URL or text; context and citations dropped", () => {
  const messages: Message[] = [{
    role: "user",
    parts: [
      { type: "text", text: "Read:" },
      {
        type: "document",
        source: { kind: "data", mediaType: "application/pdf", base64: PDF },
        title: "q3.pdf",
        context: "figures",
      },
      { type: "document", source: { kind: "url", url: "https://example.com/a.pdf" } },
      { type: "document", source: { kind: "text", text: "Plain." }, title: "notes.txt" },
      { type: "document", source: { kind: "text", text: "Untitled." }, citations: true },
    ],
  }];
  assert.deepEqual(body({}, messages).contents, [{
    role: "user",
    parts: [
      { text: "Read:" },
      { inlineData: { mimeType: "application/pdf", data: PDF } },
      { fileData: { mimeType: "application/pdf", fileUri: "https://example.com/a.pdf" } },
      { text: "notes.txt\nPlain." },
      { text: "Untitled." },
    ],
  }]);
  assert.deepEqual(droppedBy({}, messages), ["citations", "context"]);
  const quiet: Message[] = [{
    role: "user",
    parts: [{ type: "document", source: { kind: "text", text: "x" }, citations: false }],
  }];
  assert.deepEqual(droppedBy({}, quiet), []);
});

/** A weather call in Paris answered with `content` (the tool's text, then documents). */
function answeredWith(...documents: ToolResultPart["content"]): Message[] {
  return [
    user("Paris"),
    { role: "assistant", parts: [call("swy_resp1_1", "Paris")] },
    {
      role: "tool",
      parts: [{
        type: "tool_result",
        callId: "swy_resp1_1",
        content: [{ type: "text", text: "see the report" }, ...documents],
        isError: false,
      }],
    },
  ];
}

const PDF_DOCUMENT = {
  type: "document",
  source: { kind: "data", mediaType: "application/pdf", base64: PDF },
} as const;

Deno.test("gemini request: a document a tool returned follows its function response", () => {
  const got = body({ tools: [WEATHER] }, answeredWith(PDF_DOCUMENT));
  assert.deepEqual(got.contents[2], {
    role: "user",
    parts: [
      { functionResponse: { name: "get_weather", response: { output: "see the report" } } },
      { inlineData: { mimeType: "application/pdf", data: PDF } },
    ],
  });
});

Deno.test("gemini request: for a gemini-3 model a tool's inline media go inside its function response, URLs after it", () => {
  const messages = answeredWith(PDF_DOCUMENT, {
    type: "document",
    source: { kind: "url", url: "https://example.com/a.pdf" },
  });
  const req = chatRequest({ messages }, { tools: [WEATHER] });
  const gemini3 = toGeminiRequest(req, new Set(), "gemini-3-pro-preview");
  assert.deepEqual(gemini3.contents[2], {
    role: "user",
    parts: [
      {
        functionResponse: {
          name: "get_weather",
          response: { output: "see the report" },
          parts: [{ inlineData: { mimeType: "application/pdf", data: PDF } }],
        },
      },
      { fileData: { mimeType: "application/pdf", fileUri: "https://example.com/a.pdf" } },
    ],
  });
  const older = toGeminiRequest(req, new Set(), "gemini-2.5-flash");
  assert.equal(older.contents[2]!.parts.length, 3, "siblings for models before Gemini 3");
});

Deno.test("gemini request: what cannot be sent is a 400 naming the field", async () => {
  const noCall = await gatewayError(() => body({}, [user("hi"), result("call_x", "18C")]));
  assert.equal(noCall.status, 400);
  assert.equal(noCall.param, "messages[1].tool_call_id");
  assert.match(noCall.message, /call_x/);
  const badArgs = await gatewayError(() =>
    body({}, [user("hi"), {
      role: "assistant",
      parts: [{ type: "tool_call", id: "c", name: "f", arguments: "[1]" }],
    }])
  );
  assert.equal(badArgs.param, "messages[1].tool_calls[0].function.arguments");
  const empty = await gatewayError(() =>
    body({}, [{ role: "system", parts: [{ type: "text", text: "x" }] }])
  );
  assert.equal(empty.param, "messages");
});

Deno.test("gemini request: cache markers are dropped and named", () => {
  assert.deepEqual(
    droppedBy({}, [{
      role: "user",
      parts: [{ type: "text", text: "hi", cache: { type: "ephemeral" } }],
    }]),
    ["cache_control"],
  );
});

Deno.test("gemini request: a system message after a model turn stays at its place, marked as a system reminder", () => {
  const got = body({}, [
    { role: "system", parts: [{ type: "text", text: "Be brief." }] },
    user("one"),
    { role: "assistant", parts: [call("c1", "Paris")] },
    { role: "system", parts: [{ type: "text", text: "Tools changed." }] },
    result("c1", "18C"),
    { role: "developer", parts: [{ type: "text", text: "Answer in French." }] },
  ]);
  assert.deepEqual(got.systemInstruction, { parts: [{ text: "Be brief." }] });
  assert.deepEqual(got.contents.at(-1), {
    role: "user",
    parts: [
      { functionResponse: { id: "c1", name: "get_weather", response: { output: "18C" } } },
      { text: "<system-reminder>\nTools changed.\n</system-reminder>" },
      { text: "<system-reminder>\nAnswer in French.\n</system-reminder>" },
    ],
  });
});
