/**
 * Documents (PDFs and text) through every front door to back ends of other styles, on a real
 * port: what Claude Code, Codex CLI and Gemini CLI send when they read a PDF reaches an
 * OpenAI-style, Anthropic or Gemini upstream in that upstream's own form, checked by the fakes;
 * a model without `image_input` refuses a PDF naming the field; a form a back end cannot take is
 * a 400 naming the field.
 */
import assert from "node:assert/strict";
import OpenAI from "npm:openai@7.55.0";
import { startGateway } from "./support/gateway.ts";
import { startSdkGateway } from "./support/sdk_gateway.ts";
import { pdfBase64 } from "./support/pdf.ts";

const PDF = pdfBase64(2);
const DATA_URL = `data:application/pdf;base64,${PDF}`;
const MESSAGES_HEADERS = { "content-type": "application/json", "anthropic-version": "2023-06-01" };
const JSON_HEADERS = { "content-type": "application/json" };

type Json = Record<string, unknown>;

/** The Claude Code turn after its Read tool read a PDF: the tool result holds the document. */
function claudeCodeTurn(model: string): Json {
  return {
    model,
    max_tokens: 1024,
    messages: [
      { role: "user", content: "What does report.pdf say?" },
      {
        role: "assistant",
        content: [{
          type: "tool_use",
          id: "toolu_01",
          name: "Read",
          input: { file_path: "/work/report.pdf" },
        }],
      },
      {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: "toolu_01",
          content: [{
            type: "document",
            source: { type: "base64", media_type: "application/pdf", data: PDF },
          }],
        }],
      },
    ],
    tools: [{
      name: "Read",
      description: "Reads a file",
      input_schema: { type: "object", properties: { file_path: { type: "string" } } },
    }],
  };
}

Deno.test("documents: Claude Code's PDF tool result reaches OpenAI as a file part and Gemini as inline data", async () => {
  await using gw = await startGateway();
  for (const stream of [false, true]) {
    const res = await fetch(`${gw.server.url}/v1/messages`, {
      method: "POST",
      headers: MESSAGES_HEADERS,
      body: JSON.stringify({ ...claudeCodeTurn("oa-chat"), stream }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    await res.body?.cancel();
    const messages = (gw.openai.last.body as Json).messages as Json[];
    assert.deepEqual(messages.at(-2), {
      role: "tool",
      tool_call_id: "toolu_01",
      content: "",
    });
    assert.deepEqual(messages.at(-1), {
      role: "user",
      content: [{ type: "file", file: { filename: "document.pdf", file_data: DATA_URL } }],
    });
  }
  const res = await fetch(`${gw.server.url}/v1/messages`, {
    method: "POST",
    headers: MESSAGES_HEADERS,
    body: JSON.stringify(claudeCodeTurn("ge-chat")),
  });
  assert.equal(res.status, 200, await res.clone().text());
  await res.body?.cancel();
  const contents = (gw.gemini.last.body as Json).contents as { parts: Json[] }[];
  const parts = contents.at(-1)!.parts;
  assert.ok(
    parts.some((p) =>
      JSON.stringify(p.inlineData) ===
        JSON.stringify({ mimeType: "application/pdf", data: PDF })
    ),
    JSON.stringify(parts).slice(0, 500),
  );
  assert.deepEqual([...gw.openai.violations, ...gw.gemini.violations], []);
});

Deno.test("documents: a chat completions file part reaches Anthropic as a document block, Gemini as inline data", async () => {
  await using gw = await startGateway();
  const body = (model: string) => ({
    model,
    messages: [{
      role: "user",
      content: [
        { type: "text", text: "Summarise this." },
        { type: "file", file: { filename: "q3.pdf", file_data: DATA_URL } },
      ],
    }],
  });
  const an = await fetch(`${gw.server.url}/v1/chat/completions`, {
    method: "POST",
    headers: JSON_HEADERS,
    body: JSON.stringify(body("an-chat")),
  });
  assert.equal(an.status, 200, await an.clone().text());
  await an.body?.cancel();
  const sent = (gw.anthropic.last.body as { messages: { content: Json[] }[] }).messages;
  assert.deepEqual(sent.at(-1)!.content.at(-1), {
    type: "document",
    source: { type: "base64", media_type: "application/pdf", data: PDF },
    title: "q3.pdf",
  });
  const ge = await fetch(`${gw.server.url}/v1/chat/completions`, {
    method: "POST",
    headers: JSON_HEADERS,
    body: JSON.stringify(body("ge-chat")),
  });
  assert.equal(ge.status, 200, await ge.clone().text());
  await ge.body?.cancel();
  const contents = (gw.gemini.last.body as Json).contents as { parts: Json[] }[];
  assert.deepEqual(contents.at(-1)!.parts.at(-1), {
    inlineData: { mimeType: "application/pdf", data: PDF },
  });
  assert.deepEqual([...gw.anthropic.violations, ...gw.gemini.violations], []);
});

Deno.test("documents: Responses input_file by data to OpenAI-style chat, by URL to Anthropic; a URL OpenAI chat cannot take is a 400 naming the field", async () => {
  await using gw = await startGateway();
  const post = (model: string, file: Json) =>
    fetch(`${gw.server.url}/v1/responses`, {
      method: "POST",
      headers: JSON_HEADERS,
      body: JSON.stringify({
        model,
        input: [{
          role: "user",
          content: [{ type: "input_text", text: "Read it." }, { type: "input_file", ...file }],
        }],
      }),
    });
  const data = await post("oa-chat", { filename: "a.pdf", file_data: DATA_URL });
  assert.equal(data.status, 200, await data.clone().text());
  await data.body?.cancel();
  const messages = (gw.openai.last.body as Json).messages as { content: Json[] }[];
  assert.deepEqual(messages.at(-1)!.content.at(-1), {
    type: "file",
    file: { filename: "a.pdf", file_data: DATA_URL },
  });
  const url = "https://files.example.test/a.pdf";
  const byUrl = await post("an-chat", { file_url: url });
  assert.equal(byUrl.status, 200, await byUrl.clone().text());
  await byUrl.body?.cancel();
  const sent = (gw.anthropic.last.body as { messages: { content: Json[] }[] }).messages;
  assert.deepEqual(sent.at(-1)!.content.at(-1), { type: "document", source: { type: "url", url } });
  const calls = gw.openai.received.length;
  const refused = await post("oa-chat", { file_url: url });
  assert.equal(refused.status, 400);
  const error = (await refused.json()).error;
  assert.equal(error.param, "messages[0].content[1].file.file_url");
  assert.match(error.message, /not by URL/);
  assert.equal(gw.openai.received.length, calls, "refused before any upstream call");
});

Deno.test("documents: the Gemini CLI's inline PDF reaches an OpenAI-style model as a file part", async () => {
  await using gw = await startGateway();
  const res = await fetch(`${gw.server.url}/v1beta/models/oa-chat:generateContent`, {
    method: "POST",
    headers: JSON_HEADERS,
    body: JSON.stringify({
      contents: [{
        role: "user",
        parts: [
          { text: "What is in this file?" },
          { inlineData: { mimeType: "application/pdf", data: PDF } },
        ],
      }],
    }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  await res.body?.cancel();
  const messages = (gw.openai.last.body as Json).messages as { content: Json[] }[];
  assert.deepEqual(messages.at(-1)!.content.at(-1), {
    type: "file",
    file: { filename: "document.pdf", file_data: DATA_URL },
  });
  assert.deepEqual(gw.openai.violations, []);
});

Deno.test("documents: a PDF needs image_input, a text document does not; bad documents are a 400 naming the field", async () => {
  await using gw = await startGateway();
  const post = (content: Json[]) =>
    fetch(`${gw.server.url}/v1/messages`, {
      method: "POST",
      headers: MESSAGES_HEADERS,
      body: JSON.stringify({
        model: "sim-chat",
        max_tokens: 64,
        messages: [{ role: "user", content }],
      }),
    });
  const pdf = await post([{
    type: "document",
    source: { type: "base64", media_type: "application/pdf", data: PDF },
  }]);
  assert.equal(pdf.status, 400);
  const refusal = await pdf.json();
  assert.equal(refusal.error.type, "invalid_request_error");
  assert.match(
    refusal.error.message,
    /^messages\.0\.content\.0: The model `sim-chat` does not accept PDF documents/,
  );
  const text = await post([
    {
      type: "document",
      source: { type: "text", media_type: "text/plain", data: "Ledger: 3 lines." },
    },
    { type: "text", text: "How many lines?" },
  ]);
  assert.equal(text.status, 200, await text.clone().text());
  await text.body?.cancel();
  const notPdf = await post([{
    type: "document",
    source: { type: "base64", media_type: "application/pdf", data: btoa("hello, world") },
  }]);
  assert.equal(notPdf.status, 400);
  assert.match((await notPdf.json()).error.message, /^messages\.0\.content\.0\.source\.data: /);
});

Deno.test("documents: count_tokens counts a PDF by its pages on a back end without its own count", async () => {
  await using gw = await startGateway();
  const res = await fetch(`${gw.server.url}/v1/messages/count_tokens`, {
    method: "POST",
    headers: MESSAGES_HEADERS,
    body: JSON.stringify({
      model: "oa-chat",
      messages: [{
        role: "user",
        content: [
          {
            type: "document",
            source: { type: "base64", media_type: "application/pdf", data: pdfBase64(6) },
          },
          { type: "text", text: "Summarise." },
        ],
      }],
    }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  const { input_tokens } = await res.json();
  assert.ok(input_tokens >= 9_000 && input_tokens < 9_100, String(input_tokens));
});

Deno.test("documents: the simulator describes the documents it was sent, and a PDF a tool returned", async () => {
  await using gw = await startGateway();
  const post = async (messages: Json[]) => {
    const res = await fetch(`${gw.server.url}/v1/messages`, {
      method: "POST",
      headers: MESSAGES_HEADERS,
      body: JSON.stringify({ model: "sim-vision", max_tokens: 512, messages }),
    });
    assert.equal(res.status, 200);
    return (await res.json()).content[0].text as string;
  };
  const sent = await post([{
    role: "user",
    content: [
      { type: "text", text: "Read both." },
      {
        type: "document",
        source: { type: "base64", media_type: "application/pdf", data: PDF },
        title: "q3.pdf",
      },
      { type: "document", source: { type: "text", media_type: "text/plain", data: "12345" } },
    ],
  }]);
  const bytes = Uint8Array.fromBase64(PDF).length.toLocaleString("en-US");
  assert.match(
    sent,
    new RegExp(
      `You sent 2 documents: document 1 is "q3\\.pdf", a PDF of 2 pages \\(${bytes} bytes\\); document 2 is a text of 5 characters\\.`,
    ),
  );
  const turn = claudeCodeTurn("sim-vision");
  const read = await post(turn.messages as Json[]);
  assert.match(
    read,
    new RegExp(`The Read tool returned the document a PDF of 2 pages \\(${bytes} bytes\\)\\.`),
  );
});

Deno.test("documents: a Gemini 3 function response's PDF part reaches an OpenAI-style model after the tool message", async () => {
  await using gw = await startGateway();
  const res = await fetch(`${gw.server.url}/v1beta/models/oa-chat:generateContent`, {
    method: "POST",
    headers: JSON_HEADERS,
    body: JSON.stringify({
      contents: [
        { role: "user", parts: [{ text: "Read the report." }] },
        { role: "model", parts: [{ functionCall: { id: "c1", name: "read", args: {} } }] },
        {
          role: "user",
          parts: [{
            functionResponse: {
              id: "c1",
              name: "read",
              response: { output: "the report" },
              parts: [{
                inlineData: { mimeType: "application/pdf", data: PDF, displayName: "q3.pdf" },
              }],
            },
          }],
        },
      ],
      tools: [{ functionDeclarations: [{ name: "read", parameters: { type: "OBJECT" } }] }],
    }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  await res.body?.cancel();
  const messages = (gw.openai.last.body as Json).messages as Json[];
  assert.deepEqual(messages.slice(-2), [
    { role: "tool", tool_call_id: "c1", content: "the report" },
    {
      role: "user",
      content: [{ type: "file", file: { filename: "q3.pdf", file_data: DATA_URL } }],
    },
  ]);
  assert.deepEqual(gw.openai.violations, []);
});

Deno.test("documents: the OpenAI SDK's file part and Responses input_file reach an Anthropic back end as document blocks", async () => {
  await using gw = await startSdkGateway();
  const client = new OpenAI({ baseURL: gw.baseURL, apiKey: gw.apiKey, maxRetries: 0 });
  const completion = await client.chat.completions.create({
    model: "an-chat",
    messages: [{
      role: "user",
      content: [
        { type: "text", text: "Summarise." },
        { type: "file", file: { filename: "q3.pdf", file_data: DATA_URL } },
      ],
    }],
  });
  assert.ok(completion.choices[0]!.message.content);
  const block = {
    type: "document",
    source: { type: "base64", media_type: "application/pdf", data: PDF },
    title: "q3.pdf",
  };
  const sent = () => (gw.anthropic.last.body as { messages: { content: Json[] }[] }).messages;
  assert.deepEqual(sent().at(-1)!.content.at(-1), block);
  const response = await client.responses.create({
    model: "an-chat",
    input: [{
      role: "user",
      content: [
        { type: "input_text", text: "Summarise." },
        { type: "input_file", filename: "q3.pdf", file_data: DATA_URL },
      ],
    }],
  });
  assert.equal(response.status, "completed");
  assert.deepEqual(sent().at(-1)!.content.at(-1), block);
  assert.deepEqual(gw.anthropic.violations, []);
});
