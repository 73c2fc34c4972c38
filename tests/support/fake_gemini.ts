/**
 * A fake Gemini upstream: `POST /v1beta/models/{model}:generateContent`,
 * `:streamGenerateContent?alt=sse` and `:countTokens` (its `contents`), checked against the
 * documented rules (the `x-goog-api-key` header, known fields only, `user`/`model` roles, one data
 * field per part, inline images whose bytes match their type, inline PDFs, function responses as
 * many as the calls of the turn before and paired by id or name, the JSON Schema keywords Gemini
 * lists, tool config and thinking config shapes, and Gemini 3's thought-signature rule: in the
 * current turn the first function call of each model step must come back with the signature it was
 * given, or with the documented skip value), answered byte for byte the way Gemini answers: JSON,
 * or `data:` frames split by CRLF blank lines with no end marker, text in pieces, each function
 * call whole in its own frame, thought summaries when asked for, signatures on the first call
 * (always) and on the answer's end (with thinking), usage in every frame, and the finish reason in
 * the last.
 */
import { createHmac } from "node:crypto";
import { GEMINI_LISTING, geminiListRoute } from "./fake_model_lists.ts";
import { fakeVector } from "./fake_openai_embeddings.ts";
import {
  type Conversation,
  defaultScript,
  generate,
  type Generation,
  promptTokens,
  type Script,
  sniffImage,
  tokenize,
  type Turn,
} from "./fake_model.ts";
import {
  type Answer,
  FAKE_API_KEY,
  type FakeOptions,
  type FakeStyle,
  FakeUpstream,
} from "./fake_upstream.ts";

type Obj = Record<string, unknown>;

/** The signature Gemini documents for history it did not write. */
export const SKIP_SIGNATURE = "skip_thought_signature_validator";
const SIGNING_KEY = "fake-gemini-signing-key";
const PATH =
  /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens|batchEmbedContents)$/;

/** The vector length of the fake's embedding models when a request asks none. */
export const FAKE_GEMINI_DIMENSIONS = 768;
const TASK_TYPES = new Set([
  "TASK_TYPE_UNSPECIFIED",
  "RETRIEVAL_QUERY",
  "RETRIEVAL_DOCUMENT",
  "SEMANTIC_SIMILARITY",
  "CLASSIFICATION",
  "CLUSTERING",
  "QUESTION_ANSWERING",
  "FACT_VERIFICATION",
  "CODE_RETRIEVAL_QUERY",
]);

/** What is wrong with a `batchEmbedContents` body for `model` (Gemini's documented rules: at
 * most 100 requests, each naming the same model, one text content, an optional positive
 * `outputDimensionality` and a known `taskType`). */
function checkEmbedBody(body: unknown, model: string): string[] {
  const bad: string[] = [];
  const requests = (body as { requests?: unknown })?.requests;
  if (!Array.isArray(requests) || requests.length === 0) return ["requests: missing or empty"];
  if (requests.length > 100) bad.push(`requests: ${requests.length} (at most 100)`);
  requests.forEach((r: Obj, i) => {
    if (r.model !== `models/${model}`) bad.push(`requests[${i}].model: ${r.model}`);
    const parts = (r.content as Obj | undefined)?.parts;
    if (!Array.isArray(parts) || parts.length !== 1 || typeof parts[0]?.text !== "string") {
      bad.push(`requests[${i}].content: expected one text part`);
    }
    const dims = r.outputDimensionality;
    if (dims !== undefined && !(Number.isInteger(dims) && (dims as number) > 0)) {
      bad.push(`requests[${i}].outputDimensionality: ${dims}`);
    }
    if (r.taskType !== undefined && !TASK_TYPES.has(r.taskType as string)) {
      bad.push(`requests[${i}].taskType: ${r.taskType}`);
    }
    for (const key of Object.keys(r)) {
      if (!["model", "content", "outputDimensionality", "taskType", "title"].includes(key)) {
        bad.push(`requests[${i}]: unknown field ${key}`);
      }
    }
  });
  return bad;
}

const TOP_LEVEL = [
  "contents",
  "systemInstruction",
  "tools",
  "toolConfig",
  "generationConfig",
  "safetySettings",
  "cachedContent",
];
const GENERATION = [
  "maxOutputTokens",
  "temperature",
  "topP",
  "topK",
  "stopSequences",
  "seed",
  "presencePenalty",
  "frequencyPenalty",
  "candidateCount",
  "responseMimeType",
  "responseSchema",
  "responseJsonSchema",
  "thinkingConfig",
];
const DATA_FIELDS = [
  "text",
  "inlineData",
  "fileData",
  "functionCall",
  "functionResponse",
  "executableCode",
  "codeExecutionResult",
];
/** The JSON Schema keywords Gemini's documentation lists for `*JsonSchema` fields. */
const SCHEMA_KEYWORDS = new Set([
  "$id",
  "$defs",
  "$ref",
  "$anchor",
  "type",
  "format",
  "title",
  "description",
  "enum",
  "items",
  "prefixItems",
  "minItems",
  "maxItems",
  "minimum",
  "maximum",
  "anyOf",
  "properties",
  "additionalProperties",
  "required",
  "propertyOrdering",
  "minLength",
  "maxLength",
  "pattern",
  "minProperties",
  "maxProperties",
  "nullable",
]);
const GRPC_STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function keysAllowed(obj: Obj, allowed: readonly string[], at: string, bad: string[]): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) {
      bad.push(
        `Invalid JSON payload received. Unknown name "${key}" at '${at}': Cannot find field.`,
      );
    }
  }
}

/** The fake's thought signature for what a part holds, bound to the model. */
export function geminiSignature(model: string, what: string): string {
  return createHmac("sha256", SIGNING_KEY).update(`${model}\n${what}`).digest("base64");
}

function callSignature(model: string, call: Obj): string {
  return geminiSignature(model, `call\n${call.name}\n${JSON.stringify(call.args ?? {})}`);
}

function textSignature(model: string, text: string): string {
  return geminiSignature(model, `text\n${text}`);
}

function schemaViolations(schema: unknown, at: string, bad: string[]): void {
  if (!isObj(schema)) return;
  for (const [key, value] of Object.entries(schema)) {
    if (!SCHEMA_KEYWORDS.has(key)) bad.push(`${at}: unsupported JSON Schema keyword "${key}"`);
    if (key === "properties" || key === "$defs") {
      for (const [name, s] of Object.entries(isObj(value) ? value : {})) {
        schemaViolations(s, `${at}.${key}.${name}`, bad);
      }
    } else if (key === "items" || key === "additionalProperties") {
      schemaViolations(value, `${at}.${key}`, bad);
    } else if ((key === "anyOf" || key === "prefixItems") && Array.isArray(value)) {
      value.forEach((s, i) => schemaViolations(s, `${at}.${key}[${i}]`, bad));
    }
  }
}

function checkPart(part: unknown, role: string, at: string, bad: string[]): void {
  if (!isObj(part)) return void bad.push(`${at}: a part must be an object`);
  keysAllowed(part, [...DATA_FIELDS, "thought", "thoughtSignature"], at, bad);
  const data = DATA_FIELDS.filter((f) => part[f] !== undefined);
  if (data.length !== 1) bad.push(`${at}: a part must hold exactly one data field (got ${data})`);
  if (part.text !== undefined && typeof part.text !== "string") bad.push(`${at}.text: a string`);
  if (part.thoughtSignature !== undefined && typeof part.thoughtSignature !== "string") {
    bad.push(`${at}.thoughtSignature: a string`);
  }
  if (part.inlineData !== undefined) {
    const d = part.inlineData;
    if (!isObj(d) || typeof d.mimeType !== "string" || typeof d.data !== "string") {
      return void bad.push(`${at}.inlineData: {mimeType, data}`);
    }
    keysAllowed(d, ["mimeType", "data"], `${at}.inlineData`, bad);
    let bytes: Uint8Array | null = null;
    try {
      bytes = Uint8Array.fromBase64(d.data);
    } catch {
      bad.push(`${at}.inlineData.data: invalid base64`);
    }
    if (d.mimeType === "application/pdf") {
      if (bytes !== null && new TextDecoder().decode(bytes.subarray(0, 5)) !== "%PDF-") {
        bad.push(`${at}.inlineData: the data is not a PDF`);
      }
    } else if (bytes !== null && sniffImage(bytes) !== d.mimeType) {
      bad.push(`${at}.inlineData: the data is not a ${d.mimeType} image`);
    }
  }
  if (part.fileData !== undefined) {
    const f = part.fileData;
    if (!isObj(f) || typeof f.mimeType !== "string" || typeof f.fileUri !== "string") {
      bad.push(`${at}.fileData: {mimeType, fileUri}`);
    }
  }
  if (part.functionCall !== undefined) {
    const c = part.functionCall;
    if (role !== "model") bad.push(`${at}.functionCall: only in a model turn`);
    if (!isObj(c) || typeof c.name !== "string" || !isObj(c.args)) {
      return void bad.push(`${at}.functionCall: {name, args}`);
    }
    keysAllowed(c, ["id", "name", "args"], `${at}.functionCall`, bad);
  }
  if (part.functionResponse !== undefined) {
    const r = part.functionResponse;
    if (role !== "user") bad.push(`${at}.functionResponse: only in a user turn`);
    if (!isObj(r) || typeof r.name !== "string" || !isObj(r.response)) {
      return void bad.push(`${at}.functionResponse: {name, response}`);
    }
    keysAllowed(
      r,
      ["id", "name", "response", "parts", "willContinue"],
      `${at}.functionResponse`,
      bad,
    );
  }
}

/** Calls of a model content and the responses of the user content after it must pair up. */
function checkResponses(calls: Obj[], responses: Obj[], at: string, bad: string[]): void {
  if (responses.length !== calls.length) {
    bad.push(
      `${at}: Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.`,
    );
    return;
  }
  calls.forEach((call, i) => {
    const response = call.id !== undefined ? responses.find((r) => r.id === call.id) : responses[i];
    if (response === undefined) bad.push(`${at}: no function response for the call id ${call.id}`);
    else if (response.name !== call.name) {
      bad.push(`${at}: the function response ${response.name} answers the call ${call.name}`);
    }
  });
}

/** Gemini 3's rule: in the current turn (since the last user text), the first function call
 * of each model step carries its signature; a signature given anywhere must be valid. */
function checkSignatures(model: string, contents: Obj[], bad: string[]): void {
  let current = 0;
  contents.forEach((c, i) => {
    const parts = Array.isArray(c.parts) ? c.parts.filter(isObj) : [];
    if (c.role === "user" && parts.some((p) => typeof p.text === "string")) current = i;
  });
  contents.forEach((c, i) => {
    if (c.role !== "model" || !Array.isArray(c.parts)) return;
    const parts = c.parts.filter(isObj);
    let text = "";
    for (const [j, part] of parts.entries()) {
      const signature = part.thoughtSignature;
      const at = `contents[${i}].parts[${j}]`;
      if (typeof part.text === "string" && part.thought !== true) text += part.text;
      if (signature === undefined || signature === SKIP_SIGNATURE) continue;
      const expected = isObj(part.functionCall)
        ? callSignature(model, part.functionCall)
        : part.thought === true
        ? null
        : textSignature(model, text);
      if (signature !== expected) bad.push(`${at}: Thought signature is not valid.`);
    }
    const first = parts.find((p) => isObj(p.functionCall));
    if (i > current && first !== undefined && first.thoughtSignature === undefined) {
      bad.push(
        `contents[${i}]: Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance.`,
      );
    }
  });
}

/** Checks a request body against the documented format; returns the violations. */
export function checkGeminiRequest(
  headers: Headers,
  body: unknown,
  apiKey: string,
  model: string,
): string[] {
  const bad: string[] = [];
  if (headers.get("x-goog-api-key") !== apiKey) bad.push("auth: x-goog-api-key");
  if (headers.get("authorization") !== null) bad.push("auth: an Authorization header too");
  if (!isObj(body)) return [...bad, "the body is not a JSON object"];
  keysAllowed(body, TOP_LEVEL, "", bad);
  const contents = Array.isArray(body.contents) ? body.contents : [];
  if (contents.length === 0) {
    bad.push("contents: * GenerateContentRequest.contents: contents is not specified");
  }
  let calls: Obj[] = [];
  contents.forEach((c: unknown, i) => {
    const at = `contents[${i}]`;
    if (!isObj(c)) return void bad.push(`${at}: an object`);
    keysAllowed(c, ["role", "parts"], at, bad);
    if (c.role !== "user" && c.role !== "model") bad.push(`${at}.role: "user" or "model"`);
    if (!Array.isArray(c.parts) || c.parts.length === 0) {
      return void bad.push(`${at}.parts: must not be empty`);
    }
    c.parts.forEach((p: unknown, j) => checkPart(p, c.role as string, `${at}.parts[${j}]`, bad));
    const parts = c.parts.filter(isObj);
    const responses = parts.flatMap((p) => isObj(p.functionResponse) ? [p.functionResponse] : []);
    if (calls.length > 0 || responses.length > 0) {
      if (c.role === "user") checkResponses(calls, responses, at, bad);
    }
    calls = c.role === "model"
      ? parts.flatMap((p) => isObj(p.functionCall) ? [p.functionCall] : [])
      : [];
  });
  checkSignatures(model, contents.filter(isObj), bad);
  if (body.systemInstruction !== undefined) {
    const s = body.systemInstruction;
    if (
      !isObj(s) || !Array.isArray(s.parts) ||
      !s.parts.every((p) => isObj(p) && typeof p.text === "string")
    ) {
      bad.push("systemInstruction: {parts: [{text}]}");
    }
  }
  const names = new Set<string>();
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) bad.push("tools: an array");
    for (const [i, tool] of (Array.isArray(body.tools) ? body.tools : []).entries()) {
      if (!isObj(tool) || !Array.isArray(tool.functionDeclarations)) {
        bad.push(`tools[${i}]: {functionDeclarations}`);
        continue;
      }
      keysAllowed(tool, ["functionDeclarations"], `tools[${i}]`, bad);
      for (const [j, d] of tool.functionDeclarations.entries()) {
        const at = `tools[${i}].functionDeclarations[${j}]`;
        if (!isObj(d) || typeof d.name !== "string" || !/^[A-Za-z_][\w.:-]{0,63}$/.test(d.name)) {
          bad.push(`${at}.name: Invalid function name`);
          continue;
        }
        keysAllowed(
          d,
          ["name", "description", "parameters", "parametersJsonSchema", "response", "behavior"],
          at,
          bad,
        );
        if (d.parameters !== undefined && d.parametersJsonSchema !== undefined) {
          bad.push(`${at}: parameters and parametersJsonSchema are mutually exclusive`);
        }
        schemaViolations(d.parametersJsonSchema, `${at}.parametersJsonSchema`, bad);
        names.add(d.name);
      }
    }
  }
  if (body.toolConfig !== undefined) {
    const config = isObj(body.toolConfig) ? body.toolConfig.functionCallingConfig : undefined;
    if (!isObj(config) || !["AUTO", "ANY", "NONE", "VALIDATED"].includes(config.mode as string)) {
      bad.push("toolConfig.functionCallingConfig.mode: AUTO, ANY, NONE or VALIDATED");
    } else if (config.allowedFunctionNames !== undefined) {
      if (config.mode !== "ANY") bad.push("allowedFunctionNames: only with mode ANY");
      for (const n of config.allowedFunctionNames as string[]) {
        if (!names.has(n)) bad.push(`allowedFunctionNames: no function "${n}"`);
      }
    }
  }
  checkGeneration(body.generationConfig, bad);
  return bad;
}

function checkGeneration(config: unknown, bad: string[]): void {
  if (config === undefined) return;
  if (!isObj(config)) return void bad.push("generationConfig: an object");
  keysAllowed(config, GENERATION, "generation_config", bad);
  const t = config.temperature;
  if (t !== undefined && (typeof t !== "number" || t < 0 || t > 2)) {
    bad.push("generationConfig.temperature: between 0 and 2");
  }
  const stops = config.stopSequences;
  if (stops !== undefined && (!Array.isArray(stops) || stops.length > 5)) {
    bad.push("generationConfig.stopSequences: at most 5");
  }
  const max = config.maxOutputTokens;
  if (max !== undefined && (!Number.isInteger(max) || (max as number) < 1)) {
    bad.push("generationConfig.maxOutputTokens: a positive integer");
  }
  if (config.responseSchema !== undefined && config.responseJsonSchema !== undefined) {
    bad.push("generationConfig: responseSchema and responseJsonSchema are mutually exclusive");
  }
  if (
    (config.responseSchema !== undefined || config.responseJsonSchema !== undefined) &&
    config.responseMimeType !== "application/json"
  ) bad.push("generationConfig: a response schema needs responseMimeType application/json");
  schemaViolations(config.responseJsonSchema, "generationConfig.responseJsonSchema", bad);
  const thinking = config.thinkingConfig;
  if (thinking !== undefined) {
    if (!isObj(thinking)) return void bad.push("thinkingConfig: an object");
    keysAllowed(
      thinking,
      ["thinkingBudget", "includeThoughts", "thinkingLevel"],
      "thinking_config",
      bad,
    );
    if (thinking.thinkingBudget !== undefined && thinking.thinkingLevel !== undefined) {
      bad.push("thinkingConfig: thinkingBudget and thinkingLevel cannot be used together");
    }
  }
}

function text(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** The provider-neutral conversation of a request. */
function geminiConversation(model: string, body: Obj): Conversation {
  const system = isObj(body.systemInstruction) && Array.isArray(body.systemInstruction.parts)
    ? body.systemInstruction.parts.map((p: Obj) => p.text as string)
    : [];
  const turns: Turn[] = (body.contents as Obj[]).map((c) => {
    const turn: Turn = {
      role: c.role === "model" ? "assistant" : "user",
      texts: [],
      images: [],
      toolCalls: [],
      toolResults: [],
    };
    for (const p of c.parts as Obj[]) {
      if (typeof p.text === "string" && p.thought !== true) {
        if (p.text !== "") turn.texts.push(p.text);
      } else if (isObj(p.inlineData) && p.inlineData.mimeType !== "application/pdf") {
        const bytes = Uint8Array.fromBase64(p.inlineData.data as string);
        turn.images.push({ mediaType: sniffImage(bytes) ?? "unknown", bytes: bytes.length });
      } else if (isObj(p.functionCall)) {
        const call = p.functionCall;
        turn.toolCalls.push({
          id: (call.id as string | undefined) ?? (call.name as string),
          name: call.name as string,
          arguments: call.args as Record<string, unknown>,
        });
      } else if (isObj(p.functionResponse)) {
        const r = p.functionResponse;
        const response = r.response as Obj;
        turn.toolResults.push({
          id: (r.id as string | undefined) ?? (r.name as string),
          text: text(response.output ?? response.error ?? response),
        });
      }
    }
    return turn;
  });
  const tools = (Array.isArray(body.tools) ? body.tools as Obj[] : []).flatMap((t) =>
    (t.functionDeclarations as Obj[]).map((d) => ({
      name: d.name as string,
      description: (d.description as string | undefined) ?? null,
      parameters: (d.parametersJsonSchema ?? d.parameters ?? {}) as Record<string, unknown>,
    }))
  );
  const calling = isObj(body.toolConfig) ? body.toolConfig.functionCallingConfig as Obj : {};
  const allowed = calling.allowedFunctionNames as string[] | undefined;
  const config = (body.generationConfig ?? {}) as Obj;
  return {
    model,
    system,
    turns,
    tools,
    toolChoice: calling.mode === "NONE"
      ? "none"
      : calling.mode === "ANY"
      ? (allowed?.length === 1 ? { name: allowed[0]! } : "required")
      : "auto",
    maxTokens: (config.maxOutputTokens as number | undefined) ?? 8192,
    stop: (config.stopSequences as string[] | undefined) ?? [],
    temperature: (config.temperature as number | undefined) ?? null,
  };
}

/** What the fake answers beside the script, for the next answers in order. */
export interface GeminiTurn {
  /** End with this finish reason instead (the text cut to half). */
  finishReason?: string;
  /** Block the prompt: no candidates, `promptFeedback.blockReason`. */
  blockReason?: string;
}

/** Options of the fake. */
export interface FakeGeminiOptions extends FakeOptions {
  /** Whether function calls carry ids (Gemini 3) or not (Gemini 2.5). Default: they do. */
  callIds?: boolean;
}

/** A running fake Gemini upstream. */
export interface FakeGemini extends FakeUpstream {
  turns: GeminiTurn[];
  callIds: boolean;
  /** The model of each request, from its path. */
  readonly models: string[];
}

interface Rendered {
  parts: Obj[];
  /** Parts of the stream, frame by frame. */
  frames: Obj[][];
  finishReason: string | null;
  blockReason: string | null;
  usage: Obj;
}

function render(
  model: string,
  body: Obj,
  g: Generation,
  turn: GeminiTurn,
  c: Conversation,
): Rendered {
  const thinking = isObj(body.generationConfig) ? body.generationConfig.thinkingConfig : undefined;
  const thinks = isObj(thinking) && thinking.thinkingBudget !== 0;
  const frames: Obj[][] = [];
  const parts: Obj[] = [];
  let thoughts = 0;
  if (thinks) {
    const last = c.turns.at(-1);
    const thought = last?.toolResults.length
      ? `The tools answered: ${last.toolResults.map((r) => r.text).join("; ")}.`
      : `Thinking about: ${last?.texts.join(" ") ?? ""}`;
    thoughts = tokenize(thought).length;
    if (isObj(thinking) && thinking.includeThoughts === true) {
      parts.push({ text: thought, thought: true });
      frames.push([{ text: thought, thought: true }]);
    }
  }
  let pieces = g.pieces;
  if (turn.finishReason !== undefined) pieces = pieces.slice(0, Math.ceil(pieces.length / 2));
  const answer = pieces.join("");
  for (const piece of pieces) frames.push([{ text: piece }]);
  const calls = turn.finishReason === undefined ? g.toolCalls : [];
  if (answer !== "") {
    const part: Obj = { text: answer };
    if (thinks && calls.length === 0) part.thoughtSignature = textSignature(model, answer);
    parts.push(part);
  }
  if (thinks && calls.length === 0 && answer !== "") {
    frames.push([{ text: "", thoughtSignature: textSignature(model, answer) }]);
  }
  calls.forEach((call, i) => {
    const functionCall: Obj = { name: call.name, args: JSON.parse(call.arguments) };
    if (body.__callIds) functionCall.id = call.id;
    const part: Obj = { functionCall };
    if (i === 0) part.thoughtSignature = callSignature(model, functionCall);
    parts.push(part);
    frames.push([part]);
  });
  const finishReason = turn.blockReason !== undefined
    ? null
    : turn.finishReason ?? (g.finish === "length" ? "MAX_TOKENS" : "STOP");
  const candidates = pieces.length + (calls.length > 0 ? g.completionTokens - g.pieces.length : 0);
  const usage: Obj = {
    promptTokenCount: g.promptTokens,
    candidatesTokenCount: candidates,
    totalTokenCount: g.promptTokens + candidates + thoughts,
  };
  if (thoughts > 0) usage.thoughtsTokenCount = thoughts;
  return {
    parts: turn.blockReason !== undefined ? [] : parts,
    frames: turn.blockReason !== undefined ? [] : frames,
    finishReason,
    blockReason: turn.blockReason ?? null,
    usage,
  };
}

function frame(data: Obj): string {
  return `data: ${JSON.stringify(data)}\r\n\r\n`;
}

/**
 * Starts a fake Gemini upstream on a free port; its `url` is a base_url. Thinking is on when
 * the request has a `thinkingConfig` whose budget is not 0 (the thoughts counted in the
 * usage, their summary given with `includeThoughts`).
 */
export function startFakeGemini(options: FakeGeminiOptions = {}): FakeGemini {
  let calls = 0;
  let responses = 0;
  const apiKey = options.apiKey ?? FAKE_API_KEY;
  const answer = (model: string, stream: boolean, body: Obj, script: Script): Answer => {
    fake.models.push(model);
    const turn = fake.turns.shift() ?? {};
    const c = geminiConversation(model, body);
    const thinking = isObj(body.generationConfig)
      ? body.generationConfig.thinkingConfig
      : undefined;
    if (isObj(thinking) && thinking.thinkingBudget !== 0 && c.maxTokens !== 8192) {
      c.maxTokens = Math.max(1, c.maxTokens - (thinking.thinkingBudget as number ?? 0));
    }
    const g = generate(c, script(c), () => `call_${++calls}`);
    const r = render(model, { ...body, __callIds: fake.callIds }, g, turn, c);
    const responseId = `fakeResp${++responses}`;
    const head = (parts: Obj[] | null, last: boolean): Obj => {
      const out: Obj = {};
      if (parts !== null) {
        const candidate: Obj = { content: { parts, role: "model" } };
        if (last && r.finishReason !== null) candidate.finishReason = r.finishReason;
        candidate.index = 0;
        out.candidates = [candidate];
      }
      if (r.blockReason !== null) out.promptFeedback = { blockReason: r.blockReason };
      out.usageMetadata = last
        ? r.usage
        : { promptTokenCount: r.usage.promptTokenCount, totalTokenCount: r.usage.promptTokenCount };
      out.modelVersion = model;
      out.responseId = responseId;
      return out;
    };
    if (!stream) {
      return {
        kind: "json",
        status: 200,
        body: head(r.blockReason === null ? r.parts : null, true),
      };
    }
    if (r.blockReason !== null) return { kind: "stream", events: [frame(head(null, true))] };
    const frames = r.frames.length > 0 ? r.frames : [[{ text: "" }]];
    return {
      kind: "stream",
      events: frames.map((parts, i) => frame(head(parts, i === frames.length - 1))),
    };
  };
  const style: FakeStyle = {
    path: "/v1beta/models/{model}:generateContent",
    check: () => [],
    answer: () => {
      throw new Error("the fake Gemini answers through match()");
    },
    routes: { "/v1beta/models": geminiListRoute(apiKey, () => fake) },
    match(url) {
      const m = PATH.exec(url.pathname);
      if (m === null) return undefined;
      const model = decodeURIComponent(m[1]!);
      if (m[2] === "batchEmbedContents") {
        return {
          check: (headers, body) => {
            const bad = checkEmbedBody(body, model);
            if (headers.get("x-goog-api-key") !== apiKey) bad.push("x-goog-api-key: wrong key");
            return bad;
          },
          answer: (body) => ({
            kind: "json",
            status: 200,
            body: {
              embeddings: (body as { requests: Obj[] }).requests.map((r) => ({
                values: fakeVector(
                  ((r.content as Obj).parts as Obj[])[0]!.text as string,
                  (r.outputDimensionality as number | undefined) ?? FAKE_GEMINI_DIMENSIONS,
                ),
              })),
            },
          }),
        };
      }
      if (m[2] === "countTokens") {
        return {
          check: (headers, body) => checkGeminiRequest(headers, body, apiKey, model),
          answer: (body) => ({
            kind: "json",
            status: 200,
            body: { totalTokens: promptTokens(geminiConversation(model, body)) },
          }),
        };
      }
      const stream = m[2] === "streamGenerateContent";
      return {
        check: (headers, body) => {
          const bad = checkGeminiRequest(headers, body, apiKey, model);
          if (stream && url.searchParams.get("alt") !== "sse") bad.push("stream: ?alt=sse missing");
          if (!stream && url.search !== "") bad.push(`unexpected query ${url.search}`);
          return bad;
        },
        answer: (body) => answer(model, stream, body, fake.script),
      };
    },
    errorBody: (status, type, message, code) => {
      // A gRPC status name given as the type is the status; other types are other styles'.
      const name = /^[A-Z_]+$/.test(type) ? type : GRPC_STATUS[status] ?? "UNKNOWN";
      const error: Obj = { code: status, message, status: name };
      if (code !== undefined) {
        error.details = [{
          "@type": "type.googleapis.com/google.rpc.ErrorInfo",
          reason: code,
          domain: "googleapis.com",
        }];
      }
      return { error };
    },
    authError: () => ({
      status: 400,
      body: style.errorBody(
        400,
        "INVALID_ARGUMENT",
        "API key not valid. Please pass a valid API key.",
        "API_KEY_INVALID",
      ),
    }),
    streamError: (_type, message) =>
      frame({ error: { code: 503, message, status: "UNAVAILABLE" } }),
  };
  const fake = Object.assign(new FakeUpstream(style, { ...options, apiKey }), {
    turns: [] as GeminiTurn[],
    callIds: options.callIds ?? true,
    models: [] as string[],
  });
  fake.script = defaultScript;
  fake.listing = structuredClone([...GEMINI_LISTING]);
  return fake;
}
