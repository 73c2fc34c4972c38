/**
 * The Gemini front door over raw HTTP: its stream transcripts against the shapes Gemini
 * documents (SSE `data:` frames split by CRLF blank lines with no end marker, or one JSON
 * array; every chunk a `GenerateContentResponse` with one `model` candidate, the same
 * `responseId` and `modelVersion`, the finish reason and the whole usage in the last only),
 * both through the canonical model and passed through to a Gemini back end; Google's error
 * shape on every error of its paths; the key as `x-goog-api-key` or `?key=`, never in the log;
 * the `/v1` paths told apart from OpenAI's `/v1/models/{id}`.
 */
import assert from "node:assert/strict";
import { BACKENDS, startGenaiGateway } from "./support/genai_gateway.ts";
import { eventually } from "./support/eventually.ts";
import { startServer, testConfig } from "./support/server.ts";

type Obj = Record<string, unknown>;

const BODY = { contents: [{ role: "user", parts: [{ text: "Hello there" }] }] };

/** Checks one chunk of a stream against Gemini's shape; returns its candidate. */
function checkChunk(chunk: Obj, model: string, id: string, last: boolean): Obj {
  const candidates = chunk.candidates as Obj[];
  assert.equal(candidates.length, 1);
  const candidate = candidates[0]!;
  assert.equal(candidate.index, 0);
  const content = candidate.content as Obj;
  assert.equal(content.role, "model");
  assert.ok(Array.isArray(content.parts) && content.parts.length > 0);
  for (const part of content.parts as Obj[]) assert.ok(Object.keys(part).length > 0);
  assert.equal(chunk.modelVersion, model);
  assert.equal(chunk.responseId, id);
  const usage = chunk.usageMetadata as Obj;
  assert.equal(typeof usage.promptTokenCount, "number");
  assert.equal(typeof usage.totalTokenCount, "number");
  assert.equal("finishReason" in candidate, last, JSON.stringify(chunk));
  if (last) {
    assert.equal(candidate.finishReason, "STOP");
    assert.equal(typeof usage.candidatesTokenCount, "number");
  }
  return candidate;
}

function textOf(chunks: Obj[]): string {
  return chunks.flatMap((c) =>
    (((c.candidates as Obj[])[0]!.content as Obj).parts as Obj[]).map((p) =>
      typeof p.text === "string" && p.thought !== true ? p.text : ""
    )
  ).join("");
}

for (const backend of BACKENDS) {
  Deno.test(`gemini-door/${backend.name}: an SSE stream (?alt=sse) is Gemini's frames`, async () => {
    await using gateway = await startGenaiGateway();
    const res = await fetch(
      `${gateway.server.url}/v1beta/models/${backend.model}:streamGenerateContent?alt=sse`,
      {
        method: "POST",
        headers: { "x-goog-api-key": gateway.apiKey, "content-type": "application/json" },
        body: JSON.stringify(BODY),
      },
    );
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type")!, /^text\/event-stream/);
    const text = await res.text();
    assert.ok(text.endsWith("\r\n\r\n"), "frames end with a CRLF blank line");
    const frames = text.split("\r\n\r\n").slice(0, -1);
    assert.ok(frames.length >= 1);
    const chunks = frames.map((frame) => {
      assert.match(frame, /^data: \{/, "one data line per frame, no event names");
      assert.ok(!frame.includes("\n"), "one line");
      return JSON.parse(frame.slice("data: ".length)) as Obj;
    });
    const id = chunks[0]!.responseId as string;
    chunks.forEach((c, i) => checkChunk(c, backend.model, id, i === chunks.length - 1));
    assert.match(textOf(chunks), /Hello there/);
    const fake = gateway.fakeOf(backend);
    if (fake) assert.deepEqual(fake.violations, []);
  });

  Deno.test(`gemini-door/${backend.name}: a stream without alt=sse is one JSON array`, async () => {
    await using gateway = await startGenaiGateway();
    const res = await fetch(
      `${gateway.server.url}/v1beta/models/${backend.model}:streamGenerateContent?key=${gateway.apiKey}`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(BODY),
      },
    );
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type")!, /^application\/json/);
    const text = await res.text();
    assert.ok(text.startsWith("[{") && text.endsWith("}]"), text.slice(0, 40));
    const chunks = JSON.parse(text) as Obj[];
    const id = chunks[0]!.responseId as string;
    chunks.forEach((c, i) => checkChunk(c, backend.model, id, i === chunks.length - 1));
    assert.match(textOf(chunks), /Hello there/);
  });
}

Deno.test("gemini-door: a Gemini back end gets the call as written, signatures and all", async () => {
  await using gateway = await startGenaiGateway();
  const body = {
    ...BODY,
    safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
    generationConfig: { temperature: 0.3, candidateCount: 1 },
  };
  const res = await fetch(`${gateway.server.url}/v1beta/models/ge-chat:generateContent`, {
    method: "POST",
    headers: { "x-goog-api-key": gateway.apiKey, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("x-switchyard-dropped-params"), null);
  const answer = await res.json();
  assert.equal(answer.modelVersion, "ge-chat");
  const received = gateway.gemini.received.at(-1)!;
  assert.equal(received.path, "/v1beta/models/gemini-up:generateContent");
  assert.deepEqual(received.body, body);
  // Through the canonical model, what only Gemini takes is named as dropped.
  const other = await fetch(`${gateway.server.url}/v1beta/models/oa-chat:generateContent`, {
    method: "POST",
    headers: { "x-goog-api-key": gateway.apiKey, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(other.status, 200);
  assert.equal(other.headers.get("x-switchyard-dropped-params"), "safetySettings");
  await other.body?.cancel();
});

Deno.test("gemini-door: errors on its paths are in Google's shape, the field named", async () => {
  await using gateway = await startGenaiGateway();
  const url = gateway.server.url;
  const call = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${url}${path}`, init);
    return { status: res.status, body: await res.json() };
  };
  const post = (body: unknown, key = gateway.apiKey) => ({
    method: "POST",
    headers: { "x-goog-api-key": key, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const invalid = await call(
    "/v1beta/models/sim-vision:generateContent",
    post({ contents: [{ parts: [{ text: "x" }] }], generationConfig: { candidateCount: 2 } }),
  );
  assert.equal(invalid.status, 400);
  assert.deepEqual(invalid.body, {
    error: {
      code: 400,
      message: "generationConfig.candidateCount: expected an integer from 1 to 1, but got 2",
      status: "INVALID_ARGUMENT",
    },
  });
  const missing = await call("/v1beta/models/nope:generateContent", post(BODY));
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.status, "NOT_FOUND");
  const method = await call("/v1beta/models/sim-vision:embedContent", post(BODY));
  assert.equal(method.status, 404);
  assert.equal(method.body.error.status, "NOT_FOUND");
  const unauthenticated = await call(
    "/v1beta/models/sim-vision:generateContent",
    post(BODY, "sk-sy-wrong"),
  );
  assert.equal(unauthenticated.status, 401);
  assert.equal(unauthenticated.body.error.status, "UNAUTHENTICATED");
  // On /v1, a POST is Gemini's (OpenAI has none there); a GET with Google's key too.
  const v1 = await call("/v1/models/sim-vision:generateContent", post({ contents: [] }));
  assert.equal(v1.status, 400);
  assert.equal(v1.body.error.status, "INVALID_ARGUMENT");
  const listed = await call("/v1/models", { headers: { "x-goog-api-key": gateway.apiKey } });
  assert.ok(Array.isArray(listed.body.models));
  const openai = await call("/v1/models");
  assert.equal(openai.body.object, "list");
  // `key` is a key only on Gemini's paths: elsewhere a query parameter like any other.
  const other = await call("/v1/models?key=1");
  assert.equal(other.body.object, "list");
  const hidden = await call("/v1/models/sim-image", {
    headers: { "x-goog-api-key": gateway.apiKey },
  });
  assert.equal(hidden.status, 404);
  assert.equal(hidden.body.error.status, "NOT_FOUND");
  // A refused capability says the same as on the other doors.
  const refused = await call(
    "/v1beta/models/sim-chat:generateContent",
    post({
      ...BODY,
      contents: [{ parts: [{ fileData: { fileUri: "gs://b/o", mimeType: "text/plain" } }] }],
    }),
  );
  assert.equal(refused.status, 400);
  assert.match(
    refused.body.error.message,
    /^contents\[0\]\.parts\[0\]\.fileData: The model `sim-chat`/,
  );
});

Deno.test("gemini-door: the ?key= of a call never reaches the request log", async () => {
  await using gateway = await startGenaiGateway();
  const res = await fetch(
    `${gateway.server.url}/v1beta/models/sim-vision:generateContent?key=${gateway.apiKey}`,
    { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(BODY) },
  );
  assert.equal(res.status, 200);
  await res.body?.cancel();
  const record = await eventually(
    () => gateway.server.output.records().find((r) => String(r.path).startsWith("/v1beta/")),
    "the call's log record",
  );
  assert.equal(record.path, "/v1beta/models/sim-vision:generateContent");
  assert.ok(record.key_id, "the key was used");
  assert.ok(!gateway.server.output.out.includes(gateway.apiKey));
  assert.ok(!gateway.server.output.err.includes(gateway.apiKey));
});

Deno.test("gemini-door: token limits reckon the path's model and generationConfig.maxOutputTokens", async () => {
  await using server = await startServer({
    config: testConfig((raw) => {
      raw.limits = { anonymous: { chat: { tokens_per_minute: 300 } } };
    }),
  });
  const call = (maxOutputTokens: number) =>
    fetch(`${server.url}/v1beta/models/sim-chat:generateContent`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...BODY, generationConfig: { maxOutputTokens } }),
    });
  const small = await call(50);
  assert.equal(small.status, 200);
  assert.ok(small.headers.has("x-ratelimit-limit-tokens"));
  await small.body?.cancel();
  const large = await call(1000);
  assert.equal(large.status, 429);
  const body = await large.json();
  assert.equal(body.error.code, 429);
  assert.equal(body.error.status, "RESOURCE_EXHAUSTED");
});
