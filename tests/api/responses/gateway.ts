/**
 * The gateway for the Responses API's end-to-end tests, on a real port: one model per back-end
 * style — the simulator (`sim-vision`), the OpenAI-style fake spoken to by chat completions
 * (`oa-chat`), the Anthropic-style fake (`an-chat`), and the fake Responses upstream behind a
 * provider with `responses_api: true` (`oa-resp`) — an API key made through the admin API, and
 * the official `openai` client on it. The fakes write their streams in 7-byte slices.
 */
import OpenAI from "npm:openai@7.55.0";
import { admin, ADMIN_TOKEN } from "../../support/admin.ts";
import { type FakeAnthropic, startFakeAnthropic } from "../../support/fake_anthropic.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../../support/fake_openai.ts";
import {
  type FakeOpenAIResponses,
  startFakeOpenAIResponses,
} from "../../support/fake_openai_responses.ts";
import { CALL_TIMEOUT_MS } from "../../support/sdk_gateway.ts";
import { startServer, testConfig, type TestServer } from "../../support/server.ts";

/** One model to test, by the style of its back end. */
export interface Target {
  name: "simulator" | "openai" | "anthropic" | "passthrough";
  model: string;
  /** Whether its answer follows the fake's script (the simulator makes up its own). */
  scripted: boolean;
}

/** The targets, in the order the tests run them. */
export const TARGETS: readonly Target[] = [
  { name: "simulator", model: "sim-vision", scripted: false },
  { name: "openai", model: "oa-chat", scripted: true },
  { name: "anthropic", model: "an-chat", scripted: true },
  { name: "passthrough", model: "oa-resp", scripted: true },
];

const MODEL = { chat_completions: true, function_calling: true, image_input: true };
const GENEROUS = { per_minute: 100_000, per_day: 1_000_000 };

/** The gateway, its fakes and clients. */
export interface ResponsesGateway {
  server: TestServer;
  openai: FakeOpenAI;
  anthropic: FakeAnthropic;
  responses: FakeOpenAIResponses;
  baseURL: string;
  apiKey: string;
  /** The `openai` client with the gateway's key (another key, or `null` for none). */
  client(apiKey?: string | null): OpenAI;
  /** Makes another API key. */
  newKey(): Promise<string>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts the fakes and the gateway. */
export async function startResponsesGateway(): Promise<ResponsesGateway> {
  const slices = { sliceBytes: 7 };
  const openai = startFakeOpenAI(slices);
  const anthropic = startFakeAnthropic(slices);
  const responses = startFakeOpenAIResponses(slices);
  const closeFakes = async () => {
    await openai.close();
    await anthropic.close();
    await responses.close();
  };
  const env: Record<string, string> = {
    OA_KEY: openai.apiKey,
    AN_KEY: anthropic.apiKey,
    OAR_KEY: responses.apiKey,
    SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN,
  };
  const upstream = (id: string, style: string, url: string, key: string) => ({
    id,
    style,
    base_url: url,
    api_key_env: key,
    max_retries: 0,
  });
  let server: TestServer;
  try {
    server = await startServer({
      config: testConfig((raw) => {
        (raw.providers as unknown[]).push(
          upstream("oa", "openai", `${openai.url}/v1`, "OA_KEY"),
          upstream("an", "anthropic", anthropic.url, "AN_KEY"),
          { ...upstream("oar", "openai", `${responses.url}/v1`, "OAR_KEY"), responses_api: true },
        );
        (raw.models as unknown[]).push(
          { id: "oa-chat", provider: "oa", upstream_model: "gpt-up", ...MODEL },
          { id: "an-chat", provider: "an", upstream_model: "claude-up", ...MODEL },
          { id: "oa-resp", provider: "oar", upstream_model: "gpt-resp-up", ...MODEL },
        );
        raw.limits = {
          anonymous: { chat: GENEROUS, other: GENEROUS, images: GENEROUS },
          key: { chat: GENEROUS, other: GENEROUS, images: GENEROUS },
        };
      }),
      env: (name) => env[name],
    });
  } catch (e) {
    await closeFakes();
    throw e;
  }
  const baseURL = `${server.url}/v1`;
  const newKey = async () => {
    const res = await admin(server, "POST", "/admin/keys", { name: "responses-test" });
    if (res.status !== 201) throw new Error(`could not make a key: ${JSON.stringify(res.body)}`);
    return res.body.key as string;
  };
  let apiKey: string;
  try {
    apiKey = await newKey();
  } catch (e) {
    await server.close();
    await closeFakes();
    throw e;
  }
  return {
    server,
    openai,
    anthropic,
    responses,
    baseURL,
    apiKey,
    newKey,
    client: (key: string | null = apiKey) =>
      new OpenAI({
        baseURL,
        apiKey: key ?? "anonymous",
        maxRetries: 0,
        timeout: CALL_TIMEOUT_MS,
        ...(key === null ? { defaultHeaders: { Authorization: null } } : {}),
      }),
    async [Symbol.asyncDispose]() {
      await server.close();
      await closeFakes();
    },
  };
}
