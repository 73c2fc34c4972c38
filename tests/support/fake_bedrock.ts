/**
 * A fake Amazon Bedrock runtime: every request's AWS Signature Version 4 is checked with AWS's
 * own signer (`@smithy/signature-v4`: a wrong one is a 403 `InvalidSignatureException`, as
 * Bedrock answers), `POST /model/{modelId}/converse` and `/converse-stream` are checked
 * against the Converse API's documented rules (roles alternating from a user turn, content
 * blocks with one member each, images as base64 bytes of their format, documents under
 * distinct valid names with a PDF's bytes or a text, tool use only with a `toolConfig` and
 * answered by `toolResult`s of the very next user turn, cache points, Claude's thinking in
 * `additionalModelRequestFields` with its sampling, tool-choice and tool-loop rules,
 * reasoning signatures checked) and answered as Bedrock answers: JSON, or frames of the binary
 * event stream encoded with `@smithy/eventstream-codec`, written split at arbitrary byte
 * boundaries. `POST /model/{modelId}/invoke` answers Titan and Cohere embedding bodies.
 */
import { SignatureV4 } from "npm:@smithy/signature-v4@5.7.5";
import { Sha256 } from "npm:@aws-crypto/sha256-js@5.2.0";
import { EventStreamCodec } from "npm:@smithy/eventstream-codec@4.5.2";
import { fromUtf8, toUtf8 } from "npm:@smithy/util-utf8@4.5.2";
import { thinkingSignature } from "./fake_anthropic_signature.ts";
import {
  type Conversation,
  defaultScript,
  fragments,
  generate,
  type Script,
  sniffImage,
  tokenize,
  type Turn,
} from "./fake_model.ts";

type Obj = Record<string, unknown>;

/** AWS credentials as the fake expects them. */
export interface FakeAwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** The credentials the fake expects unless told otherwise (AWS's documentation examples). */
export const FAKE_AWS_CREDENTIALS: FakeAwsCredentials = {
  accessKeyId: "AKIAIOSFODNN7EXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
};

/** The region the fake signs for unless told otherwise. */
export const FAKE_REGION = "us-east-1";

/** The request's signature as AWS's signer makes it, for a request as received. */
export async function awsSignature(
  request: { method: string; url: string; headers: Headers; body: string },
  signedHeaders: readonly string[],
  credentials: FakeAwsCredentials,
  region: string,
  signingDate: Date,
  service = "bedrock",
): Promise<string> {
  const url = new URL(request.url);
  const headers: Record<string, string> = {};
  for (const name of signedHeaders) headers[name] = request.headers.get(name) ?? "";
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of url.searchParams) {
    const had = query[name];
    query[name] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
  }
  const signer = new SignatureV4({ credentials, region, service, sha256: Sha256 });
  const signed = await signer.sign({
    method: request.method,
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port === "" ? {} : { port: Number(url.port) }),
    path: url.pathname,
    query,
    headers,
    body: request.body,
  }, { signingDate });
  return signed.headers.authorization!;
}

/** Frames of AWS's event stream, as AWS's codec writes them. */
const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** One event-stream message: an event (`:event-type`) or an exception (`:exception-type`). */
export function eventFrame(eventType: string, payload: unknown): Uint8Array {
  return codec.encode({
    headers: {
      ":event-type": { type: "string", value: eventType },
      ":content-type": { type: "string", value: "application/json" },
      ":message-type": { type: "string", value: "event" },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });
}

/** An exception message of the event stream (`throttlingException`, ...). */
export function exceptionFrame(exceptionType: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ":exception-type": { type: "string", value: exceptionType },
      ":content-type": { type: "string", value: "application/json" },
      ":message-type": { type: "string", value: "exception" },
    },
    body: fromUtf8(JSON.stringify({ message })),
  });
}

/** One way to misbehave, for one request. */
export interface BedrockFault {
  /** Answer with this status and a Bedrock error (`x-amzn-ErrorType` + `{"message"}`). */
  status?: number;
  /** The exception's name, e.g. `ThrottlingException`. */
  errorType?: string;
  message?: string;
  /** Stream: after this many events, send an exception message and end. */
  exceptionAfterEvents?: number;
  exceptionType?: string;
  /** Stream: after this many events, break the connection (no clean end). */
  breakAfterEvents?: number;
  /** Stream: flip a byte of this event's payload (its message CRC no longer matches). */
  corruptEvent?: number;
  /** Answer 200 with this raw body instead of the real answer. */
  garbage?: string;
}

/** One request the fake received. */
export interface BedrockReceived {
  method: string;
  /** The path as sent (the model id percent-encoded). */
  path: string;
  /** The model id, decoded from the path. */
  modelId: string;
  operation: string;
  headers: Headers;
  body: unknown;
  /** Violations of the documented format (empty when right). */
  violations: string[];
  /** Whether the signature was right. */
  signed: boolean;
  /** Whether the caller went away before the answer ended. */
  wentAway: boolean;
}

/** Options of a fake Bedrock. */
export interface FakeBedrockOptions {
  credentials?: FakeAwsCredentials;
  region?: string;
  /** Write streams in slices of this many bytes (default 7: frames split everywhere). */
  sliceBytes?: number;
  /** A Bedrock API key it also takes, as `Authorization: Bearer` (instead of a signature). */
  bearerToken?: string;
}

/** A running fake Bedrock runtime. */
export interface FakeBedrock {
  readonly url: string;
  readonly received: BedrockReceived[];
  faults: BedrockFault[];
  script: Script;
  sliceBytes: number;
  /** The credentials signatures must be made with (changed as a role's are renewed). */
  credentials: FakeAwsCredentials;
  readonly last: BedrockReceived;
  readonly violations: string[];
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const CONVERSE_FIELDS = new Set([
  "messages",
  "system",
  "inferenceConfig",
  "toolConfig",
  "additionalModelRequestFields",
  "additionalModelResponseFieldPaths",
  "guardrailConfig",
  "promptVariables",
  "requestMetadata",
  "performanceConfig",
]);
const BLOCK_MEMBERS = new Set([
  "text",
  "image",
  "document",
  "video",
  "toolUse",
  "toolResult",
  "guardContent",
  "cachePoint",
  "reasoningContent",
]);
const DOCUMENT_FORMATS = ["pdf", "csv", "doc", "docx", "xls", "xlsx", "html", "txt", "md"];
const INFERENCE_FIELDS = new Set(["maxTokens", "temperature", "topP", "stopSequences"]);
const FORMATS: Record<string, string> = {
  png: "image/png",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
};

const ARN = "arn:aws:bedrock:us-east-1::foundation-model/";

/** The control plane's model lists (for discovery): what `ListFoundationModels` answers for
 * text models, and `ListInferenceProfiles` in two pages. */
export const FAKE_FOUNDATION_MODELS: Obj[] = [
  {
    modelId: "anthropic.claude-sonnet-4-5-20250929-v1:0",
    inputModalities: ["TEXT", "IMAGE"],
    outputModalities: ["TEXT"],
    responseStreamingSupported: true,
    inferenceTypesSupported: ["INFERENCE_PROFILE"],
    modelLifecycle: { status: "ACTIVE" },
  },
  {
    modelId: "anthropic.claude-3-haiku-20240307-v1:0",
    inputModalities: ["TEXT", "IMAGE"],
    outputModalities: ["TEXT"],
    responseStreamingSupported: true,
    inferenceTypesSupported: ["ON_DEMAND", "INFERENCE_PROFILE"],
    modelLifecycle: { status: "ACTIVE" },
  },
  {
    modelId: "meta.llama3-8b-instruct-v1:0",
    inputModalities: ["TEXT"],
    outputModalities: ["TEXT"],
    responseStreamingSupported: true,
    inferenceTypesSupported: ["ON_DEMAND"],
    modelLifecycle: { status: "ACTIVE" },
  },
  {
    modelId: "anthropic.claude-v2",
    inputModalities: ["TEXT"],
    outputModalities: ["TEXT"],
    responseStreamingSupported: true,
    inferenceTypesSupported: ["ON_DEMAND"],
    modelLifecycle: { status: "LEGACY" },
  },
  {
    modelId: "amazon.titan-embed-text-v2:0",
    inputModalities: ["TEXT"],
    outputModalities: ["EMBEDDING"],
    inferenceTypesSupported: ["ON_DEMAND"],
    modelLifecycle: { status: "ACTIVE" },
  },
];

const PROFILE_PAGES: Obj[][] = [
  [
    {
      inferenceProfileId: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
      status: "ACTIVE",
      type: "SYSTEM_DEFINED",
      models: [{ modelArn: `${ARN}anthropic.claude-sonnet-4-5-20250929-v1:0` }],
    },
    {
      inferenceProfileId: "us.amazon.titan-embed-text-v2:0",
      status: "ACTIVE",
      type: "SYSTEM_DEFINED",
      models: [{ modelArn: `${ARN}amazon.titan-embed-text-v2:0` }],
    },
  ],
  [{
    inferenceProfileId: "eu.anthropic.claude-3-haiku-20240307-v1:0",
    status: "ACTIVE",
    type: "SYSTEM_DEFINED",
    models: [{ modelArn: `${ARN}anthropic.claude-3-haiku-20240307-v1:0` }],
  }],
];

/** The control plane's listings by path: the answer, or what is wrong with the query. */
const LISTINGS: Record<string, (url: URL) => Obj | string> = {
  "/foundation-models": (url) => {
    const output = url.searchParams.get("byOutputModality");
    const models = output === null
      ? FAKE_FOUNDATION_MODELS
      : FAKE_FOUNDATION_MODELS.filter((m) => (m.outputModalities as string[]).includes(output));
    return { modelSummaries: models };
  },
  "/inference-profiles": (url) => {
    const token = url.searchParams.get("nextToken");
    const page = token === null ? 0 : Number(token.replace("page-", ""));
    if (!Number.isInteger(page) || PROFILE_PAGES[page] === undefined) {
      return `bad nextToken ${token}`;
    }
    const next = page + 1 < PROFILE_PAGES.length ? { nextToken: `page-${page + 1}` } : {};
    return { inferenceProfileSummaries: PROFILE_PAGES[page], ...next };
  },
};

/** Starts a fake Bedrock runtime on a free port; its `url` is a `base_url`. */
export function startFakeBedrock(options: FakeBedrockOptions = {}): FakeBedrock {
  const region = options.region ?? FAKE_REGION;
  const cache = new Map<string, number>();
  let calls = 0;
  const state = {
    received: [] as BedrockReceived[],
    faults: [] as BedrockFault[],
    script: defaultScript as Script,
    sliceBytes: options.sliceBytes ?? 7,
    credentials: options.credentials ?? FAKE_AWS_CREDENTIALS,
  };

  const handle = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const text = await request.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // recorded as text
    }
    const match = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|count-tokens)$/.exec(
      url.pathname,
    );
    const received: BedrockReceived = {
      method: request.method,
      path: url.pathname,
      modelId: match ? decodeURIComponent(match[1]!) : "",
      operation: match?.[2] ?? "",
      headers: request.headers,
      body,
      violations: [],
      signed: false,
      wentAway: false,
    };
    state.received.push(received);
    request.signal.addEventListener("abort", () => received.wentAway = true, { once: true });
    const bearer = options.bearerToken !== undefined &&
      request.headers.get("authorization") === `Bearer ${options.bearerToken}`;
    const signature = bearer
      ? null
      : await checkSignature(request, url, text, state.credentials, region);
    if (signature !== null) {
      received.violations.push(`auth: ${signature}`);
      return awsError(403, "InvalidSignatureException", signature);
    }
    received.signed = true;
    if (request.method === "GET" && LISTINGS[url.pathname]) {
      const answer = LISTINGS[url.pathname]!(url);
      if (typeof answer === "string") {
        received.violations.push(answer);
        return awsError(400, "ValidationException", answer);
      }
      return json(200, answer);
    }
    if (!match || request.method !== "POST") {
      received.violations.push(`unexpected ${request.method} ${url.pathname}`);
      return awsError(404, "UnknownOperationException", `No operation at ${url.pathname}`);
    }
    if (match[1]!.includes(":") || match[1] !== encodeURIComponent(received.modelId)) {
      received.violations.push(`the model id is not URL-encoded in ${url.pathname}`);
    }
    const fault = state.faults.shift() ?? {};
    if (fault.status) {
      return awsError(
        fault.status,
        fault.errorType ?? "InternalServerException",
        fault.message ?? "fault",
      );
    }
    if (fault.garbage !== undefined) {
      return new Response(fault.garbage, { headers: { "content-type": "application/json" } });
    }
    if (received.operation === "count-tokens") {
      return countTokens(received.modelId, body, received.violations);
    }
    if (received.operation === "invoke") {
      const answer = embeddings(received.modelId, body, received.violations);
      if (received.violations.length > 0) {
        return awsError(400, "ValidationException", received.violations.join("; "));
      }
      return json(200, answer);
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      received.violations.push("the body is not a JSON object");
      return awsError(400, "ValidationException", "Malformed input request");
    }
    const checked = checkConverse(body as Obj, received.modelId);
    received.violations.push(...checked.violations);
    if (received.violations.length > 0) {
      return awsError(400, "ValidationException", received.violations.join("; "));
    }
    const reply = answerOf(checked.conversation, body as Obj, received.modelId, state.script, {
      next: () => `tooluse_${(++calls).toString().padStart(6, "0")}`,
      cache,
    });
    if (received.operation === "converse") return json(200, converseJson(reply));
    return stream(reply, fault, state.sliceBytes, request.signal, () => received.wentAway = true);
  };

  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, handle);
  const close = () => server.shutdown();
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    get received() {
      return state.received;
    },
    get faults() {
      return state.faults;
    },
    set faults(value) {
      state.faults = value;
    },
    get script() {
      return state.script;
    },
    set script(value) {
      state.script = value;
    },
    get sliceBytes() {
      return state.sliceBytes;
    },
    set sliceBytes(value) {
      state.sliceBytes = value;
    },
    get credentials() {
      return state.credentials;
    },
    set credentials(value) {
      state.credentials = value;
    },
    get last() {
      const last = state.received.at(-1);
      if (!last) throw new Error("the fake Bedrock received no request");
      return last;
    },
    get violations() {
      return state.received.flatMap((r) => r.violations);
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Why the request's signature is wrong, or `null` when it is right. */
async function checkSignature(
  request: Request,
  url: URL,
  body: string,
  credentials: FakeAwsCredentials,
  region: string,
): Promise<string | null> {
  const authorization = request.headers.get("authorization") ?? "";
  const parsed =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=[0-9a-f]{64}$/
      .exec(authorization);
  if (parsed === null) return "no AWS4-HMAC-SHA256 Authorization header";
  const [, keyId, day, scopeRegion, service, signedList] = parsed;
  if (keyId !== credentials.accessKeyId) {
    return "The security token included in the request is invalid.";
  }
  if (scopeRegion !== region || service !== "bedrock") {
    return `Credential should be scoped to a valid region and the service bedrock, not ${scopeRegion}/${service}.`;
  }
  const amzDate = request.headers.get("x-amz-date") ?? "";
  const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (date === null || !amzDate.startsWith(day!)) {
    return "x-amz-date is missing or not the scope's day";
  }
  const signed = signedList!.split(";");
  for (const name of ["host", "x-amz-date"]) {
    if (!signed.includes(name)) return `${name} is not signed`;
  }
  const token = request.headers.get("x-amz-security-token");
  if ((credentials.sessionToken ?? null) !== token) {
    return "The security token included in the request is invalid.";
  }
  if (token !== null && !signed.includes("x-amz-security-token")) {
    return "x-amz-security-token is not signed";
  }
  const hash = request.headers.get("x-amz-content-sha256");
  if (hash !== null) {
    const actual = new Uint8Array(
      await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body)),
    ).toHex();
    if (hash !== actual) return "x-amz-content-sha256 is not the body's hash";
  }
  const signingDate = new Date(
    Date.UTC(+date[1]!, +date[2]! - 1, +date[3]!, +date[4]!, +date[5]!, +date[6]!),
  );
  const expected = await awsSignature(
    { method: request.method, url: url.href, headers: request.headers, body },
    signed,
    credentials,
    region,
    signingDate,
  );
  return expected === authorization
    ? null
    : "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.";
}

/** The fields of CountTokens' `input.converse` (ConverseTokensRequest). */
const COUNT_FIELDS = new Set(["messages", "system", "toolConfig", "additionalModelRequestFields"]);

/** The fake's token count of a ConverseTokensRequest: its JSON's length over 4, rounded up (a
 * count the gateway's estimate does not give). */
export function fakeTokenCount(converse: unknown): number {
  return Math.ceil(JSON.stringify(converse).length / 4);
}

/**
 * `POST /model/{modelId}/count-tokens`: `{"input": {"converse": ...}}` checked as a Converse
 * body with only ConverseTokensRequest's fields, answered `{"inputTokens"}`. As Bedrock does, an
 * inference profile (or any model but Anthropic's Claude) is refused with a ValidationException.
 */
function countTokens(modelId: string, body: unknown, violations: string[]): Response {
  if (!/^anthropic\.claude/.test(modelId)) {
    return awsError(
      400,
      "ValidationException",
      "The provided model doesn't support counting tokens.",
    );
  }
  const input = (body as Obj | null)?.input as Obj | undefined;
  const converse = input?.converse as Obj | undefined;
  if (typeof converse !== "object" || converse === null || Object.keys(input!).length !== 1) {
    violations.push("count-tokens: the body is not {input: {converse}}");
  } else {
    for (const key of Object.keys(converse)) {
      if (!COUNT_FIELDS.has(key)) violations.push(`count-tokens: unknown field converse.${key}`);
    }
    violations.push(...checkConverse(converse, modelId).violations);
  }
  if (violations.length > 0) return awsError(400, "ValidationException", violations.join("; "));
  return json(200, { inputTokens: fakeTokenCount(converse) });
}

/** What the converse checks found, and the conversation for the script. */
interface Checked {
  violations: string[];
  conversation: Conversation;
  thinking: Obj | null;
}

function checkConverse(body: Obj, modelId: string): Checked {
  const violations: string[] = [];
  const v = (s: string) => violations.push(s);
  for (const key of Object.keys(body)) if (!CONVERSE_FIELDS.has(key)) v(`unknown field ${key}`);
  const inference = (body.inferenceConfig ?? {}) as Obj;
  for (const key of Object.keys(inference)) {
    if (!INFERENCE_FIELDS.has(key)) v(`unknown field inferenceConfig.${key}`);
  }
  const maxTokens = inference.maxTokens ?? 4096;
  if (!Number.isInteger(maxTokens) || (maxTokens as number) < 1) v("inferenceConfig.maxTokens");
  const claude = modelId.includes("anthropic.claude");
  const temperature = inference.temperature;
  if (
    temperature !== undefined &&
    (typeof temperature !== "number" || temperature < 0 || temperature > 1)
  ) {
    v("inferenceConfig.temperature must be within 0-1");
  }
  const extra = (body.additionalModelRequestFields ?? {}) as Obj;
  const thinking = (extra.thinking ?? null) as Obj | null;
  const system: string[] = [];
  if (body.system !== undefined) {
    if (!Array.isArray(body.system)) v("system must be a list");
    else {
      for (const block of body.system as Obj[]) {
        if (typeof block.text === "string") {
          if (block.text.trim() === "") v("a system text block is blank");
          system.push(block.text);
        } else if (block.cachePoint !== undefined) checkCachePoint(block.cachePoint, v);
        else v(`a system block has ${Object.keys(block).join(",")}`);
      }
    }
  }
  const tools: Conversation["tools"] = [];
  let toolChoice: Conversation["toolChoice"] = "auto";
  const toolConfig = body.toolConfig as Obj | undefined;
  if (toolConfig !== undefined) {
    const list = toolConfig.tools;
    if (!Array.isArray(list) || list.length === 0) v("toolConfig.tools must be a non-empty list");
    for (const tool of (Array.isArray(list) ? list : []) as Obj[]) {
      if (tool.cachePoint !== undefined) {
        checkCachePoint(tool.cachePoint, v);
        continue;
      }
      const spec = tool.toolSpec as Obj | undefined;
      const schema = (spec?.inputSchema as Obj | undefined)?.json as Obj | undefined;
      if (typeof spec?.name !== "string" || typeof schema !== "object") {
        v("a tool without toolSpec.name and inputSchema.json");
        continue;
      }
      if (
        spec.description !== undefined &&
        (typeof spec.description !== "string" || spec.description === "")
      ) {
        v("toolSpec.description must be a non-empty string");
      }
      tools.push({
        name: spec.name,
        description: (spec.description as string | undefined) ?? null,
        parameters: schema,
      });
    }
    const choice = toolConfig.toolChoice as Obj | undefined;
    if (choice !== undefined) {
      const members = Object.keys(choice);
      if (members.length !== 1) v("toolChoice must have one member");
      if (choice.any !== undefined) toolChoice = "required";
      else if (choice.tool !== undefined) toolChoice = { name: String((choice.tool as Obj).name) };
      if (thinking !== null && choice.auto === undefined) {
        v("Thinking may not be enabled when tool_choice forces tool use.");
      }
    }
  }
  if (thinking !== null) {
    if (!claude) v("additionalModelRequestFields.thinking is Claude's");
    if (thinking.type === "enabled") {
      const budget = thinking.budget_tokens;
      if (!Number.isInteger(budget) || (budget as number) < 1024) {
        v("thinking.budget_tokens must be >= 1024");
      }
      if ((budget as number) >= (maxTokens as number)) {
        v("max_tokens must be greater than thinking.budget_tokens");
      }
    } else if (thinking.type !== "adaptive") v(`thinking.type ${thinking.type}`);
    if (temperature !== undefined && temperature !== 1) {
      v("temperature may only be set to 1 when thinking is enabled");
    }
  }

  const turns: Turn[] = [];
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) v("messages must be a non-empty list");
  let pendingCalls: string[] = [];
  let usesTools = false;
  const documentNames = new Set<string>();
  (Array.isArray(messages) ? messages : []).forEach((message: Obj, i) => {
    const role = message.role;
    if (role !== "user" && role !== "assistant") v(`messages[${i}].role ${role}`);
    if (i === 0 && role !== "user") v("A conversation must start with a user message.");
    if (i > 0 && (messages as Obj[])[i - 1]!.role === role) {
      v("A conversation must alternate between user and assistant roles.");
    }
    const turn: Turn = {
      role: role as Turn["role"],
      texts: [],
      images: [],
      toolCalls: [],
      toolResults: [],
    };
    const content = message.content;
    if (!Array.isArray(content) || content.length === 0) {
      v(`messages[${i}].content must be a non-empty list`);
    }
    const answered: string[] = [];
    (Array.isArray(content) ? content : []).forEach((block: Obj, j) => {
      const at = `messages[${i}].content[${j}]`;
      const members = Object.keys(block);
      if (members.length !== 1 || !BLOCK_MEMBERS.has(members[0]!)) {
        v(`${at} must have exactly one member, not ${members.join(",")}`);
        return;
      }
      if (typeof block.text === "string") {
        if (block.text.trim() === "") {
          v(`${at}: The text field in the ContentBlock object is blank.`);
        }
        turn.texts.push(block.text);
      } else if (block.image !== undefined) {
        const image = checkImage(block.image as Obj, at, v);
        if (image) turn.images.push(image);
      } else if (block.document !== undefined) {
        if (role !== "user") v(`${at}: document in an assistant turn`);
        checkDocument(block.document as Obj, at, documentNames, v);
      } else if (block.cachePoint !== undefined) {
        checkCachePoint(block.cachePoint, v);
      } else if (block.toolUse !== undefined) {
        usesTools = true;
        const use = block.toolUse as Obj;
        if (role !== "assistant") v(`${at}: toolUse in a user turn`);
        if (typeof use.toolUseId !== "string" || typeof use.name !== "string") v(`${at}.toolUse`);
        if (typeof use.input !== "object" || use.input === null || Array.isArray(use.input)) {
          v(`${at}.toolUse.input must be an object`);
        }
        turn.toolCalls.push({
          id: String(use.toolUseId),
          name: String(use.name),
          arguments: use.input as Obj,
        });
      } else if (block.toolResult !== undefined) {
        usesTools = true;
        const result = block.toolResult as Obj;
        if (role !== "user") v(`${at}: toolResult in an assistant turn`);
        const id = String(result.toolUseId);
        if (!pendingCalls.includes(id)) {
          v(`${at}: toolResult ${id} answers no toolUse of the turn before`);
        }
        answered.push(id);
        if (
          result.status !== undefined && result.status !== "success" && result.status !== "error"
        ) {
          v(`${at}.toolResult.status`);
        }
        const parts = Array.isArray(result.content) ? result.content as Obj[] : [];
        if (!Array.isArray(result.content)) v(`${at}.toolResult.content must be a list`);
        const texts: string[] = [];
        parts.forEach((p, k) => {
          if (typeof p.text === "string") {
            if (p.text.trim() === "") {
              v(`${at}.toolResult.content[${k}]: text content blocks must be non-empty`);
            }
            texts.push(p.text);
          } else if (p.json !== undefined) texts.push(JSON.stringify(p.json));
          else if (p.image !== undefined) checkImage(p.image as Obj, `${at}.content[${k}]`, v);
          else if (p.document !== undefined) {
            checkDocument(p.document as Obj, `${at}.content[${k}]`, documentNames, v);
          } else v(`${at}.toolResult.content[${k}]`);
        });
        turn.toolResults.push({ id, text: texts.join("") });
      } else if (block.reasoningContent !== undefined) {
        const reasoning = block.reasoningContent as Obj;
        if (role !== "assistant") v(`${at}: reasoningContent in a user turn`);
        if (j > 0 && !("reasoningContent" in (content as Obj[])[j - 1]!)) {
          v(`${at}: reasoning must come first in its turn`);
        }
        const textBlock = reasoning.reasoningText as Obj | undefined;
        if (textBlock !== undefined) {
          if (textBlock.signature !== thinkingSignature(modelId, String(textBlock.text))) {
            v(`${at}: Invalid signature in thinking block`);
          }
        } else if (typeof reasoning.redactedContent !== "string") v(`${at}.reasoningContent`);
      } else {
        v(`${at}: ${members[0]} is not a block this fake reads`);
      }
    });
    if (role === "user" && pendingCalls.length > 0) {
      const missing = pendingCalls.filter((id) => !answered.includes(id));
      if (missing.length > 0) v(`messages[${i}]: toolUse ${missing.join(",")} has no toolResult`);
    }
    pendingCalls = role === "assistant" ? turn.toolCalls.map((c) => c.id) : [];
    turns.push(turn);
  });
  if (usesTools && toolConfig === undefined) {
    v("The toolConfig field must be defined when using toolUse and toolResult content blocks.");
  }
  if (thinking !== null && Array.isArray(messages) && messages.length >= 2) {
    const [calls, results] = (messages as Obj[]).slice(-2);
    const first = (calls!.content as Obj[] | undefined)?.[0];
    const loop = (results!.content as Obj[] | undefined)?.some((b) => b.toolResult !== undefined);
    if (calls!.role === "assistant" && loop && first?.reasoningContent === undefined) {
      v("Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.");
    }
  }
  const stop = inference.stopSequences;
  return {
    violations,
    thinking,
    conversation: {
      model: modelId,
      system,
      turns,
      tools,
      toolChoice,
      maxTokens: maxTokens as number,
      stop: Array.isArray(stop) ? stop as string[] : [],
      temperature: typeof temperature === "number" ? temperature : null,
    },
  };
}

function checkCachePoint(point: unknown, v: (s: string) => void): void {
  const p = point as Obj;
  if (p?.type !== "default") v("cachePoint.type must be default");
  if (p?.ttl !== undefined && p.ttl !== "5m" && p.ttl !== "1h") v(`cachePoint.ttl ${p.ttl}`);
  for (const key of Object.keys(p ?? {})) {
    if (key !== "type" && key !== "ttl") v(`cachePoint.${key}`);
  }
}

function checkImage(image: Obj, at: string, v: (s: string) => void) {
  const mediaType = FORMATS[String(image.format)];
  if (mediaType === undefined) v(`${at}.image.format ${image.format}`);
  const bytes = (image.source as Obj | undefined)?.bytes;
  if (typeof bytes !== "string") {
    v(`${at}.image.source.bytes must be base64 bytes`);
    return null;
  }
  let decoded: Uint8Array;
  try {
    decoded = Uint8Array.fromBase64(bytes);
  } catch {
    v(`${at}.image.source.bytes is not base64`);
    return null;
  }
  if (sniffImage(decoded) !== mediaType) v(`${at}: the image bytes are not ${image.format}`);
  return { mediaType: mediaType ?? "unknown", bytes: decoded.length };
}

/** Checks a document block as the Converse API documents it: a known format, a name of 1-200
 * alphanumerics, single whitespace, hyphens, parentheses and brackets, distinct in the request
 * (`names`), and one source (`bytes` of a PDF for `pdf`, or `text`). */
function checkDocument(doc: Obj, at: string, names: Set<string>, v: (s: string) => void): void {
  for (const key of Object.keys(doc)) {
    if (!["format", "name", "source", "context", "citations"].includes(key)) {
      v(`${at}.document.${key} is not a DocumentBlock field`);
    }
  }
  if (!DOCUMENT_FORMATS.includes(String(doc.format))) v(`${at}.document.format ${doc.format}`);
  const name = doc.name;
  if (
    typeof name !== "string" || name.length < 1 || name.length > 200 ||
    !/^[A-Za-z0-9\s\-()[\]]+$/.test(name) || /\s\s/.test(name)
  ) {
    v(`${at}.document.name ${
      JSON.stringify(name)
    }: The document file name can only contain alphanumeric characters, whitespace characters, hyphens, parentheses, and square brackets. The name can't contain more than one consecutive whitespace character.`);
  } else if (names.has(name)) v(`${at}: The document names must be unique (${name}).`);
  else names.add(name);
  if (doc.context !== undefined && typeof doc.context !== "string") v(`${at}.document.context`);
  const citations = doc.citations as Obj | undefined;
  if (citations !== undefined && typeof citations?.enabled !== "boolean") {
    v(`${at}.document.citations.enabled`);
  }
  const source = (doc.source ?? {}) as Obj;
  const members = Object.keys(source);
  if (members.length !== 1) return v(`${at}.document.source must have exactly one member`);
  if (typeof source.text === "string") {
    if (doc.format !== "txt" && doc.format !== "md") v(`${at}: a text source needs txt or md`);
    return;
  }
  if (typeof source.bytes !== "string") return v(`${at}.document.source ${members[0]}`);
  let decoded: Uint8Array;
  try {
    decoded = Uint8Array.fromBase64(source.bytes);
  } catch {
    return v(`${at}.document.source.bytes is not base64`);
  }
  const pdf = new TextDecoder().decode(decoded.subarray(0, 5)) === "%PDF-";
  if ((doc.format === "pdf") !== pdf) v(`${at}: the document bytes are not ${doc.format}`);
}

/** A reply as the fake renders it. */
interface Reply {
  reasoning: { text: string; signature: string } | null;
  pieces: string[];
  toolCalls: { id: string; name: string; arguments: string }[];
  stopReason: string;
  usage: Obj;
}

function answerOf(
  c: Conversation,
  body: Obj,
  modelId: string,
  script: Script,
  context: { next: () => string; cache: Map<string, number> },
): Reply {
  const generation = generate(c, script(c), context.next);
  const thinking = (body.additionalModelRequestFields as Obj | undefined)?.thinking;
  let reasoning: Reply["reasoning"] = null;
  if (thinking !== undefined) {
    const last = c.turns.at(-1);
    const text = last?.toolResults.length
      ? `The tools answered: ${last.toolResults.map((r) => r.text).join("; ")}.`
      : `Thinking about: ${last?.texts.join(" ") ?? ""}`;
    reasoning = { text, signature: thinkingSignature(modelId, text) };
  }
  const stopReason = {
    stop: "end_turn",
    stop_sequence: "stop_sequence",
    length: "max_tokens",
    tool_calls: "tool_use",
  }[generation.finish];
  const cached = cacheUse(body, context.cache);
  const output = generation.completionTokens + (reasoning ? tokenize(reasoning.text).length : 0);
  const usage: Obj = {
    inputTokens: cached.total - cached.read - cached.written,
    outputTokens: output,
    totalTokens: cached.total + output,
  };
  if (cached.points > 0) {
    usage.cacheReadInputTokens = cached.read;
    usage.cacheWriteInputTokens = cached.written;
  }
  return {
    reasoning,
    pieces: generation.pieces,
    toolCalls: generation.toolCalls,
    stopReason,
    usage,
  };
}

/** The prompt cache: the request cut at each cache point (tools, then system, then
 * messages), its tokens a quarter of its JSON's length. The longest prefix seen before is
 * read; from there to the last point is written. */
function cacheUse(body: Obj, seen: Map<string, number>) {
  const tools = ((body.toolConfig as Obj | undefined)?.tools ?? []) as Obj[];
  const system = (body.system ?? []) as Obj[];
  const messages = (body.messages ?? []) as Obj[];
  const prefixes: string[] = [];
  const cut = (t: Obj[], s: Obj[], m: Obj[]) =>
    JSON.stringify([t, s, m]).replace(/\{"cachePoint":\{[^}]*\}\},?/g, "");
  tools.forEach((b, i) => b.cachePoint && prefixes.push(cut(tools.slice(0, i), [], [])));
  system.forEach((b, i) => b.cachePoint && prefixes.push(cut(tools, system.slice(0, i), [])));
  messages.forEach((m, i) =>
    ((m.content ?? []) as Obj[]).forEach((b, j) => {
      if (!b.cachePoint) return;
      const head = messages.slice(0, i);
      prefixes.push(
        cut(tools, system, [...head, { ...m, content: (m.content as Obj[]).slice(0, j) }]),
      );
    })
  );
  const tokens = (text: string) => Math.ceil(text.length / 4);
  const total = tokens(cut(tools, system, messages));
  let read = 0;
  for (const prefix of prefixes) read = Math.max(read, seen.get(prefix) ?? 0);
  for (const prefix of prefixes) seen.set(prefix, tokens(prefix));
  const last = prefixes.at(-1);
  const written = last === undefined ? 0 : Math.max(0, tokens(last) - read);
  return { total: Math.max(total, read + written), read, written, points: prefixes.length };
}

function converseJson(reply: Reply): Obj {
  const content: Obj[] = [];
  if (reply.reasoning) content.push({ reasoningContent: { reasoningText: reply.reasoning } });
  const text = reply.pieces.join("");
  if (text !== "") content.push({ text });
  for (const call of reply.toolCalls) {
    content.push({
      toolUse: { toolUseId: call.id, name: call.name, input: JSON.parse(call.arguments) },
    });
  }
  return {
    output: { message: { role: "assistant", content } },
    stopReason: reply.stopReason,
    usage: reply.usage,
    metrics: { latencyMs: 12 },
  };
}

/** The padding Bedrock adds to stream events (`p`), so sizes do not tell the content. */
function padded(payload: Obj): Obj {
  return {
    ...payload,
    p: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ".slice(0, 5 + (JSON.stringify(payload).length % 20)),
  };
}

function streamFrames(reply: Reply): Uint8Array[] {
  const frames: Uint8Array[] = [eventFrame("messageStart", padded({ role: "assistant" }))];
  let index = 0;
  if (reply.reasoning) {
    for (const piece of tokenize(reply.reasoning.text)) {
      frames.push(eventFrame(
        "contentBlockDelta",
        padded({
          contentBlockIndex: index,
          delta: { reasoningContent: { text: piece } },
        }),
      ));
    }
    frames.push(eventFrame(
      "contentBlockDelta",
      padded({
        contentBlockIndex: index,
        delta: { reasoningContent: { signature: reply.reasoning.signature } },
      }),
    ));
    frames.push(eventFrame("contentBlockStop", padded({ contentBlockIndex: index++ })));
  }
  if (reply.pieces.length > 0) {
    for (const piece of reply.pieces) {
      frames.push(eventFrame(
        "contentBlockDelta",
        padded({
          contentBlockIndex: index,
          delta: { text: piece },
        }),
      ));
    }
    frames.push(eventFrame("contentBlockStop", padded({ contentBlockIndex: index++ })));
  }
  for (const call of reply.toolCalls) {
    frames.push(eventFrame(
      "contentBlockStart",
      padded({
        contentBlockIndex: index,
        start: { toolUse: { toolUseId: call.id, name: call.name } },
      }),
    ));
    for (const fragment of fragments(call.arguments, 8)) {
      frames.push(eventFrame(
        "contentBlockDelta",
        padded({
          contentBlockIndex: index,
          delta: { toolUse: { input: fragment } },
        }),
      ));
    }
    frames.push(eventFrame("contentBlockStop", padded({ contentBlockIndex: index++ })));
  }
  frames.push(eventFrame("messageStop", padded({ stopReason: reply.stopReason })));
  frames.push(eventFrame("metadata", padded({ usage: reply.usage, metrics: { latencyMs: 12 } })));
  return frames;
}

function stream(
  reply: Reply,
  fault: BedrockFault,
  slice: number,
  signal: AbortSignal,
  gone: () => void,
): Response {
  let frames = streamFrames(reply);
  if (fault.exceptionAfterEvents !== undefined) {
    frames = [
      ...frames.slice(0, fault.exceptionAfterEvents),
      exceptionFrame(
        fault.exceptionType ?? "modelStreamErrorException",
        fault.message ?? "The model stream failed.",
      ),
    ];
  }
  if (fault.breakAfterEvents !== undefined) frames = frames.slice(0, fault.breakAfterEvents);
  if (fault.corruptEvent !== undefined) {
    const frame = frames[fault.corruptEvent]!.slice();
    frame[frame.length - 6]! ^= 0x20;
    frames[fault.corruptEvent] = frame;
  }
  const all = new Uint8Array(frames.reduce((n, f) => n + f.length, 0));
  let at = 0;
  for (const frame of frames) {
    all.set(frame, at);
    at += frame.length;
  }
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      if (signal.aborted) return controller.close();
      if (sent >= all.length) {
        if (fault.breakAfterEvents === undefined) return controller.close();
        // Deno.serve logs this error to stderr; it is the injected fault, not a failure.
        return controller.error(new Error("connection broken (a fault the test asked for)"));
      }
      // A pause between slices, so they reach the reader as separate reads.
      if (sent > 0) await new Promise((resolve) => setTimeout(resolve, 0));
      controller.enqueue(all.slice(sent, sent += slice));
    },
    cancel: gone,
  });
  return new Response(body, {
    headers: {
      "content-type": "application/vnd.amazon.eventstream",
      "x-amzn-requestid": crypto.randomUUID(),
    },
  });
}

/** A deterministic unit-ish vector for a text. */
function vectorOf(text: string, dimensions: number): number[] {
  let seed = 0;
  for (const ch of text) seed = (seed * 31 + ch.codePointAt(0)!) % 1_000_003;
  return Array.from({ length: dimensions }, (_, i) => ((seed * (i + 7)) % 2000) / 1000 - 1);
}

function embeddings(modelId: string, body: unknown, violations: string[]): Obj {
  const b = (body ?? {}) as Obj;
  if (/amazon\.titan-embed/.test(modelId)) {
    for (const key of Object.keys(b)) {
      if (!["inputText", "dimensions", "normalize", "embeddingTypes"].includes(key)) {
        violations.push(`Titan: unknown field ${key}`);
      }
    }
    if (typeof b.inputText !== "string" || b.inputText === "") violations.push("Titan: inputText");
    const dimensions = b.dimensions ?? 1024;
    if (![256, 512, 1024].includes(dimensions as number)) {
      violations.push(`Titan: dimensions ${dimensions}`);
    }
    const text = String(b.inputText);
    return {
      embedding: vectorOf(text, dimensions as number),
      inputTextTokenCount: tokenize(text).length + 1,
    };
  }
  if (/cohere\.embed/.test(modelId)) {
    for (const key of Object.keys(b)) {
      if (!["texts", "input_type", "truncate", "embedding_types", "images"].includes(key)) {
        violations.push(`Cohere: unknown field ${key}`);
      }
    }
    const texts = b.texts;
    if (!Array.isArray(texts) || texts.length === 0 || texts.length > 96) {
      violations.push("Cohere: texts (1 to 96)");
    }
    const types = ["search_document", "search_query", "classification", "clustering"];
    if (!types.includes(b.input_type as string)) {
      violations.push(`Cohere: input_type ${b.input_type}`);
    }
    const vectors = ((texts ?? []) as string[]).map((t) => vectorOf(`${b.input_type}:${t}`, 1024));
    return Array.isArray(b.embedding_types)
      ? {
        id: crypto.randomUUID(),
        embeddings: { float: vectors },
        response_type: "embeddings_by_type",
        texts,
      }
      : { id: crypto.randomUUID(), embeddings: vectors, response_type: "embeddings_floats", texts };
  }
  violations.push(`no embedding model ${modelId}`);
  return {};
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "x-amzn-requestid": crypto.randomUUID() },
  });
}

/** A Bedrock error answer: the exception named in `x-amzn-ErrorType`, the body `{message}`. */
function awsError(status: number, type: string, message: string): Response {
  return new Response(JSON.stringify({ message }), {
    status,
    headers: {
      "content-type": "application/json",
      "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      "x-amzn-requestid": crypto.randomUUID(),
    },
  });
}
