/**
 * The gateway on a real port for the end-to-end tests that drive it with real client SDKs
 * (the `openai` client, the Vercel AI SDK, LangChain): three chat models side by side, one per
 * style — the simulator (`sim-vision`), a model behind the fake OpenAI upstream (`oa-chat`) and
 * one behind the fake Anthropic upstream (`an-chat`) — plus the admin API (to make keys), the
 * SDK clients pointed at it, and a few wire helpers (raw SSE reading, deadlines, schema search).
 *
 * Every call here carries a deadline, so a gateway that never answers fails a test instead of
 * hanging the run.
 */
import assert from "node:assert/strict";
import OpenAI from "npm:openai@7.55.0";
import { createOpenAI } from "npm:@ai-sdk/openai@4.0.118";
import { ChatOpenAI } from "npm:@langchain/openai@1.6.0";
import { type FakeAnthropic, startFakeAnthropic } from "./fake_anthropic.ts";
import { type FakeOpenAI, startFakeOpenAI } from "./fake_openai.ts";
import type { FakeUpstream } from "./fake_upstream.ts";
import type { Conversation, Script } from "./fake_model.ts";
import { startServer, testConfig, type TestServer } from "./server.ts";
import { admin, ADMIN_TOKEN, type JsonBody } from "./admin.ts";

/** How long one SDK or HTTP call may take before the test fails (not hangs). */
export const CALL_TIMEOUT_MS = 10_000;

const GENEROUS = { per_minute: 100_000, per_day: 1_000_000 };
const CHAT_MODEL = { chat_completions: true, function_calling: true, image_input: true };

/** One upstream style as a client sees it: the model id to ask for, and whether its fake
 * answers a test's script as it is (the simulator and a fake's own structured output make up
 * their values). */
export interface Style {
  name: "simulator" | "openai" | "anthropic";
  model: string;
  scripted: boolean;
}

/** The three styles, in the order the tests run them. */
export const STYLES: readonly Style[] = [
  { name: "simulator", model: "sim-vision", scripted: false },
  { name: "openai", model: "oa-chat", scripted: true },
  { name: "anthropic", model: "an-chat", scripted: true },
];

/** A model on the Anthropic fake that has native structured outputs (`output_config.format`,
 * Claude 4.5 and later), where the fake samples the JSON from the schema itself. */
export const ANTHROPIC_NATIVE: Style = { name: "anthropic", model: "an-native", scripted: false };

/** The gateway, the fakes behind it and the clients pointed at it. */
export interface SdkGateway {
  server: TestServer;
  openai: FakeOpenAI;
  anthropic: FakeAnthropic;
  /** The `/v1` base URL the SDKs are given. */
  baseURL: string;
  /** An API key (made through the admin API) that the SDK clients send: the AI SDK and
   * LangChain always send an `Authorization` header, and the gateway refuses unknown keys. */
  apiKey: string;
  /** The fake behind a style's model (`null` for the simulator). */
  fakeOf(style: Style): FakeUpstream | null;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Options for {@link startSdkGateway}. */
export interface SdkGatewayOptions {
  /** The fakes write their streams in slices of this many bytes. */
  sliceBytes?: number;
  /** More models (on provider `oa`, `an` or `sim`). */
  models?: Record<string, unknown>[];
  /** Settings for both upstream providers. */
  provider?: Record<string, unknown>;
}

/** Starts both fakes and a gateway (admin API on) with a chat model on each style. */
export async function startSdkGateway(options: SdkGatewayOptions = {}): Promise<SdkGateway> {
  const fakeOptions = options.sliceBytes ? { sliceBytes: options.sliceBytes } : {};
  const openai = startFakeOpenAI(fakeOptions);
  const anthropic = startFakeAnthropic(fakeOptions);
  const env: Record<string, string> = {
    OA_KEY: openai.apiKey,
    AN_KEY: anthropic.apiKey,
    SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN,
  };
  let server: TestServer;
  try {
    server = await startServer({
      config: testConfig((raw) => {
        (raw.providers as unknown[]).push(
          {
            id: "oa",
            style: "openai",
            base_url: `${openai.url}/v1`,
            api_key_env: "OA_KEY",
            max_retries: 0,
            ...options.provider,
          },
          {
            id: "an",
            style: "anthropic",
            base_url: anthropic.url,
            api_key_env: "AN_KEY",
            max_retries: 0,
            ...options.provider,
          },
        );
        (raw.models as unknown[]).push(
          { id: "oa-chat", provider: "oa", upstream_model: "gpt-up", ...CHAT_MODEL },
          { id: "an-chat", provider: "an", upstream_model: "claude-up", ...CHAT_MODEL },
          { id: "an-native", provider: "an", upstream_model: "claude-sonnet-4-5", ...CHAT_MODEL },
          ...options.models ?? [],
        );
        raw.limits = {
          anonymous: { chat: GENEROUS, other: GENEROUS, images: GENEROUS },
          key: { chat: GENEROUS, other: GENEROUS, images: GENEROUS },
        };
      }),
      env: (name) => env[name],
    });
  } catch (error) {
    await openai.close();
    await anthropic.close();
    throw error;
  }
  let apiKey: string;
  try {
    apiKey = await createKey(server);
  } catch (error) {
    await server.close();
    await openai.close();
    await anthropic.close();
    throw error;
  }
  return {
    server,
    openai,
    anthropic,
    baseURL: `${server.url}/v1`,
    apiKey,
    fakeOf: (style) =>
      style.name === "openai" ? openai : style.name === "anthropic" ? anthropic : null,
    async [Symbol.asyncDispose]() {
      await server.close();
      await openai.close();
      await anthropic.close();
    },
  };
}

/** Creates an API key through the admin API; returns the key itself. */
export async function createKey(
  server: TestServer,
  body: Record<string, unknown> = {},
): Promise<string> {
  const res = await admin(server, "POST", "/admin/keys", { name: "sdk-test", ...body });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.key as string;
}

/** The official `openai` client on the gateway with the gateway's key (or `apiKey`; `null`
 * calls anonymously, with no `Authorization` header): no retries, a deadline on every call. */
export function openaiClient(gateway: SdkGateway, apiKey: string | null = gateway.apiKey): OpenAI {
  return new OpenAI({
    baseURL: gateway.baseURL,
    apiKey: apiKey ?? "anonymous",
    maxRetries: 0,
    timeout: CALL_TIMEOUT_MS,
    ...(apiKey === null ? { defaultHeaders: { Authorization: null } } : {}),
  });
}

/** The Vercel AI SDK's OpenAI provider on the gateway; `.chat(id)` uses chat completions. */
export function aiSdkProvider(gateway: SdkGateway) {
  return createOpenAI({ baseURL: gateway.baseURL, apiKey: gateway.apiKey });
}

/** LangChain's `ChatOpenAI` on the gateway (chat completions, no retries, a deadline). */
export function langchainModel(gateway: SdkGateway, model: string): ChatOpenAI {
  return new ChatOpenAI({
    model,
    apiKey: gateway.apiKey,
    configuration: { baseURL: gateway.baseURL },
    maxRetries: 0,
    timeout: CALL_TIMEOUT_MS,
  });
}

/** A signal that fires after {@link CALL_TIMEOUT_MS}. */
export function deadline(ms = CALL_TIMEOUT_MS): AbortSignal {
  return AbortSignal.timeout(ms);
}

/** `POST /v1/<path>` with a JSON body over raw fetch, with a deadline. */
export function post(
  gateway: SdkGateway,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${gateway.baseURL}/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: deadline(),
  });
}

/** A non-streamed chat completion over raw fetch: status, headers and the parsed body. */
export async function postChat(
  gateway: SdkGateway,
  body: Record<string, unknown>,
): Promise<{ status: number; headers: Headers; body: JsonBody }> {
  const res = await post(gateway, "chat/completions", body);
  const text = await res.text();
  let parsed: JsonBody = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // left as text: the assertion that follows shows it
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** A streamed chat completion over raw fetch: the `data:` payloads in order (the final
 * `[DONE]` as the string `"[DONE]"`), and the response's status and headers. */
export async function streamChat(
  gateway: SdkGateway,
  body: Record<string, unknown>,
): Promise<{ status: number; headers: Headers; events: JsonBody[] }> {
  const res = await post(gateway, "chat/completions", { ...body, stream: true });
  const text = await res.text();
  if (!res.headers.get("content-type")?.startsWith("text/event-stream")) {
    let parsed: JsonBody = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON either
    }
    return { status: res.status, headers: res.headers, events: [parsed] };
  }
  return { status: res.status, headers: res.headers, events: sseData(text) };
}

/** The `data:` payloads of an SSE body, JSON-parsed (except `[DONE]`). */
export function sseData(text: string): JsonBody[] {
  const out: JsonBody[] = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) =>
      l.slice(5).replace(/^ /, "")
    ).join("\n");
    if (data === "") continue;
    out.push(data === "[DONE]" ? data : JSON.parse(data));
  }
  return out;
}

/** The chunks of a raw stream (without `[DONE]`), checked to end with `[DONE]`. */
export function chunksOf(events: JsonBody[]): JsonBody[] {
  assert.equal(events.at(-1), "[DONE]", `the stream ends with [DONE]: ${JSON.stringify(events)}`);
  return events.slice(0, -1);
}

/** The deltas of choice 0 in a list of chunks. */
export function deltasOf(chunks: JsonBody[]): JsonBody[] {
  return chunks.flatMap((c) => (c.choices ?? []).filter((ch: JsonBody) => ch.index === 0)).map((
    ch: JsonBody,
  ) => ch.delta ?? {});
}

/** The finish_reason of a stream's chunks (the one non-null one). */
export function finishOf(chunks: JsonBody[]): string | null {
  const reasons = chunks.flatMap((c) => c.choices ?? []).map((ch: JsonBody) => ch.finish_reason)
    .filter((r: unknown) => r !== null && r !== undefined);
  assert.ok(reasons.length <= 1, `one finish_reason in the stream: ${JSON.stringify(reasons)}`);
  return (reasons[0] as string | undefined) ?? null;
}

/** The concatenation of a string field over the deltas that have it. */
export function joined(deltas: JsonBody[], field: string): string {
  return deltas.map((d) => typeof d[field] === "string" ? d[field] : "").join("");
}

/**
 * A script for `fake` that answers `value` the way a model asked for structured output would,
 * and only when it was asked: as the arguments of the tool it is forced to call (the
 * forced-tool translation of a JSON schema); as JSON text when the request asks for JSON
 * (OpenAI's `response_format`, Anthropic's `output_format`/`output_config.format`, or a system
 * instruction that mentions JSON), continuing an assistant prefill (`{`) when the gateway put
 * one last. Otherwise it answers prose, as a model told nothing would — so a gateway that
 * drops the request for JSON on the way gets no JSON back.
 */
export function structuredScript(fake: FakeUpstream, value: unknown): Script {
  return (c: Conversation) => {
    const choice = c.toolChoice;
    const forced = typeof choice === "object"
      ? c.tools.find((t) => t.name === choice.name)
      : choice === "required" && c.tools.length === 1
      ? c.tools[0]
      : undefined;
    if (forced) {
      return {
        text: "",
        toolCalls: [{ name: forced.name, arguments: value as Record<string, unknown> }],
      };
    }
    const json = JSON.stringify(value);
    const last = c.turns.at(-1);
    const prefill = last?.role === "assistant" ? last.texts.join("") : "";
    if (prefill !== "" && json.startsWith(prefill)) {
      return { text: json.slice(prefill.length), toolCalls: [] };
    }
    // The request being answered is the fake's last one (recorded before it is answered).
    if (asksForJson(fake.last.body) || c.system.some((s) => /json/i.test(s))) {
      return { text: json, toolCalls: [] };
    }
    return { text: "Pancakes need flour, milk and eggs; serves four.", toolCalls: [] };
  };
}

function asksForJson(body: unknown): boolean {
  if (typeof body !== "object" || body === null) return false;
  const b = body as Record<string, JsonBody>;
  return ["json_object", "json_schema"].includes(b.response_format?.type) ||
    b.output_format !== undefined || b.output_config?.format !== undefined;
}

/**
 * Whether `body` (an upstream request) carries the JSON schema `schema` somewhere — as
 * `response_format.json_schema.schema`, Anthropic's `output_format`/`output_config`, or a tool's
 * `input_schema` — recognised by an object schema with the same property names, each nested
 * object schema alike. Keeps the assertion independent of how an adapter translates it.
 */
export function carriesSchema(body: unknown, schema: Record<string, unknown>): boolean {
  if (Array.isArray(body)) return body.some((b) => carriesSchema(b, schema));
  if (typeof body !== "object" || body === null) return false;
  if (sameShape(body as Record<string, unknown>, schema)) return true;
  return Object.values(body).some((v) => carriesSchema(v, schema));
}

function sameShape(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const pa = a.properties, pb = b.properties;
  if (typeof pa !== "object" || pa === null || typeof pb !== "object" || pb === null) {
    return false;
  }
  const ka = Object.keys(pa).sort(), kb = Object.keys(pb).sort();
  return JSON.stringify(ka) === JSON.stringify(kb) &&
    JSON.stringify([...(a.required as string[] ?? [])].sort()) ===
      JSON.stringify([...(b.required as string[] ?? [])].sort());
}

/** Runs `work` with a deadline: a test whose call never settles fails after `ms`. */
export async function within<T>(what: string, work: Promise<T>, ms = CALL_TIMEOUT_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export type { JsonBody };

type Obj = Record<string, JsonBody>;

/** A thinking block as the gateway gives it to clients (LiteLLM's `thinking_blocks`). */
export type ThinkingBlock =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string };

/** The assistant message a client builds from a stream's chunks: content, refusal,
 * reasoning_content, thinking_blocks (a thinking block's pieces joined until its signature
 * arrives; redacted ones as they come) and tool calls. Fields nothing was streamed for are
 * left out (content is `null` then). */
export function assembleMessage(chunks: JsonBody[]): Obj {
  const deltas = deltasOf(chunks);
  const message: Obj = { role: "assistant", content: null };
  const content = joined(deltas, "content");
  if (deltas.some((d) => typeof d.content === "string" && d.content !== "")) {
    message.content = content;
  }
  const refusal = joined(deltas, "refusal");
  if (refusal !== "") message.refusal = refusal;
  const reasoning = joined(deltas, "reasoning_content");
  if (reasoning !== "") message.reasoning_content = reasoning;
  const blocks: ThinkingBlock[] = [];
  let open: { type: "thinking"; thinking: string; signature: string } | null = null;
  for (const entry of deltas.flatMap((d) => d.thinking_blocks ?? [])) {
    if (entry.type === "redacted_thinking") {
      blocks.push({ type: "redacted_thinking", data: entry.data });
      open = null;
      continue;
    }
    if (open === null) {
      open = { type: "thinking", thinking: "", signature: "" };
      blocks.push(open);
    }
    open.thinking += entry.thinking ?? "";
    if (entry.signature) {
      open.signature += entry.signature;
      open = null;
    }
  }
  if (blocks.length > 0) message.thinking_blocks = blocks;
  const calls: Obj[] = [];
  for (const d of deltas) {
    for (const call of d.tool_calls ?? []) {
      const slot = calls[call.index] ??= {
        id: "",
        type: "function",
        function: { name: "", arguments: "" },
      };
      if (call.id) slot.id = call.id;
      if (call.function?.name) slot.function.name = call.function.name;
      slot.function.arguments += call.function?.arguments ?? "";
    }
  }
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

/** The names in a response's `x-switchyard-dropped-params` header. */
export function droppedParams(headers: Headers): string[] {
  return (headers.get("x-switchyard-dropped-params") ?? "").split(",").map((s) => s.trim())
    .filter((s) => s !== "");
}

/**
 * What `fake` answers when the gateway's last request to it is sent to it again directly (not
 * through the gateway): the upstream's own answer, to compare with what the client got. A
 * stream's `data:` payloads come as a list.
 */
export async function askDirectly(fake: FakeUpstream): Promise<JsonBody> {
  const last = fake.last;
  const headers = new Headers(last.headers);
  headers.delete("content-length");
  const res = await fetch(`${fake.url}${last.path}`, {
    method: "POST",
    headers,
    body: JSON.stringify(last.body),
    signal: deadline(),
  });
  const text = await res.text();
  assert.equal(res.status, 200, `the upstream's own answer: ${text}`);
  return res.headers.get("content-type")?.startsWith("text/event-stream")
    ? sseData(text)
    : JSON.parse(text);
}

/** The error of a chat call through `client` to `model` that must fail with `status`. */
export async function chatError(
  client: OpenAI,
  model: string,
  status: number,
  content = "Hello",
): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await client.chat.completions.create({
    model,
    messages: [{ role: "user", content }],
  }).then(() => null, (e: unknown) => e);
  assert.ok(error instanceof OpenAI.APIError, String(error));
  assert.equal(error.status, status, error.message);
  return error;
}
