/**
 * A fake Azure OpenAI resource: a deployment's `chat/completions`, `embeddings` and
 * `images/generations` under `/openai/deployments/{deployment}/...?api-version=` (the
 * `api-version` it serves required), the v1 API's `/openai/v1/chat/completions` (the
 * deployment as the body's `model`), and the Responses API at `/openai/responses` and
 * `/openai/v1/responses` (passed to the fake Responses API, fake_openai_responses.ts). Every request must carry the resource's `api-key` header
 * (or, with `bearerToken`, `Authorization: Bearer`); the bodies are checked by the fake OpenAI
 * upstream's checkers (fake_openai.ts and its embeddings and images routes).
 *
 * Answers are written the way Azure writes them: keys in alphabetical order, the deployment's
 * model version as `model`, `prompt_filter_results` and each choice's `content_filter_results`;
 * a stream opens with a chunk that has no choices and only the prompt's filter results (empty
 * `id`, `model` and `object`, `created` 0), and its usage chunk comes when asked for. The
 * content filter can refuse the prompt (a 400 `content_filter` with
 * `innererror.content_filter_result`) or cut the answer (`finish_reason: "content_filter"`).
 */
import { checkOpenAIRequest, CREATED, isObj, openAIConversation } from "./fake_openai.ts";
import { embeddingsRoute } from "./fake_openai_embeddings.ts";
import { imagesRoute } from "./fake_openai_images.ts";
import { type FakeOpenAIResponses, startFakeOpenAIResponses } from "./fake_openai_responses.ts";
import { fragments, generate, type Generation, type Script } from "./fake_model.ts";
import {
  type Answer,
  FAKE_API_KEY,
  type FakeOptions,
  type FakeRoute,
  type FakeStyle,
  FakeUpstream,
} from "./fake_upstream.ts";

type Obj = Record<string, unknown>;

/** The API version the fake serves unless told otherwise. */
export const AZURE_API_VERSION = "2024-10-21";

/** The deployments the fake has unless told otherwise: deployment name -> model version. */
export const AZURE_DEPLOYMENTS: Readonly<Record<string, string>> = {
  "chat-prod": "gpt-4o-2024-11-20",
  "embed-prod": "text-embedding-3-small",
  "image-prod": "dall-e-3",
};

/** What the content filter does to the next answers, in order (like `faults`). */
export type AzureFilter =
  /** Refuses the prompt: a 400 `content_filter`, violence filtered at medium severity. */
  | "prompt"
  /** Cuts the answer halfway: `finish_reason: "content_filter"`, violence filtered. */
  | "completion";

/** Options of {@link startFakeAzure}. */
export interface FakeAzureOptions extends FakeOptions {
  /** The `api-version` its deployments' paths require (default {@link AZURE_API_VERSION}). */
  apiVersion?: string;
  /** Its deployments (default {@link AZURE_DEPLOYMENTS}). */
  deployments?: Record<string, string>;
  /** Take `Authorization: Bearer <token>` (an Entra ID token) instead of an `api-key`: this
   * token, or any the function takes (tokens a fake Entra ID issued). */
  bearerToken?: string | ((token: string) => boolean);
}

/** A running fake Azure OpenAI resource. */
export interface FakeAzure extends FakeUpstream {
  /** The fake Responses API behind the resource's `/openai/responses` (and the v1 API's). */
  readonly responses: FakeOpenAIResponses;
  /** What the content filter does to the next chat answers, in order. */
  filters: AzureFilter[];
  /** Prompt tokens the next answers report as read from the prompt cache. */
  cachedTokens: number;
}

const SAFE = { filtered: false, severity: "safe" };

/** A filter result with every category safe but `filtered` (filtered at medium). */
function filterResult(filtered: string | null = null): Obj {
  const result: Obj = {};
  for (const name of ["hate", "self_harm", "sexual", "violence"]) {
    result[name] = name === filtered ? { filtered: true, severity: "medium" } : SAFE;
  }
  return result;
}

/** The prompt's filter results, as Azure writes them beside a completion. */
function promptFilterResults(): Obj[] {
  return [{
    prompt_index: 0,
    content_filter_results: { ...filterResult(), jailbreak: { filtered: false, detected: false } },
  }];
}

/** A JSON value with every object's keys in alphabetical order (how Azure writes them). */
export function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (!isObj(value)) return value;
  return Object.fromEntries(
    Object.keys(value).sort().map((key) => [key, sortedKeys(value[key])]),
  );
}

/** Azure's error body: `{"error": {"code", "message"}}` (with `type` and `param` when set). */
function azureError(status: number, type: string, message: string, code?: string): Obj {
  const error: Obj = { code: code ?? String(status), message };
  if (type !== "api_error" && type !== "invalid_request_error") error.type = type;
  return { error };
}

/** Azure's refusal of a prompt by its content filter. */
export function contentFilterError(): Obj {
  return {
    error: {
      message:
        "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766",
      type: null,
      param: "prompt",
      code: "content_filter",
      status: 400,
      innererror: {
        code: "ResponsibleAIPolicyViolation",
        content_filter_result: {
          ...filterResult("violence"),
          jailbreak: { filtered: false, detected: false },
        },
      },
    },
  };
}

/** Checks the auth headers and hands the OpenAI checkers headers as OpenAI's would be. */
function asOpenAIHeaders(
  headers: Headers,
  apiKey: string,
  bearer: string | ((token: string) => boolean) | null,
): { headers: Headers; bad: string[] } {
  const bad: string[] = [];
  if (bearer !== null) {
    const token = /^Bearer (.+)$/.exec(headers.get("authorization") ?? "")?.[1] ?? "";
    if (typeof bearer === "string" ? token !== bearer : !bearer(token)) {
      bad.push("auth: authorization");
    }
    if (headers.has("api-key")) bad.push("an api-key header was sent with a bearer token");
  } else {
    if (headers.get("api-key") !== apiKey) bad.push("auth: api-key header is wrong or missing");
    if (headers.has("authorization")) bad.push("an Authorization header was sent to Azure");
  }
  const openai = new Headers(headers);
  openai.set("authorization", `Bearer ${apiKey}`);
  return { headers: openai, bad };
}

/** The Responses API's paths: the resource's (dated versions) and the v1 API's. */
const RESPONSES_PATH = /^\/openai(\/v1)?\/responses$/;

/** Splits an SSE body into its events (each with its blank line). */
function sseEvents(text: string): string[] {
  return text.match(/[\s\S]*?\n\n/g) ?? [];
}

/** A deployment's path: `/openai/deployments/{deployment}/{operation}`. */
const DEPLOYMENT_PATH =
  /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings|images\/generations)$/;
/** The v1 API's path. */
const V1_PATH = /^\/openai\/v1\/(chat\/completions)$/;

/** Starts a fake Azure OpenAI resource on a free port; its `url` is a base_url. */
export function startFakeAzure(options: FakeAzureOptions = {}): FakeAzure {
  const apiKey = options.apiKey ?? FAKE_API_KEY;
  const apiVersion = options.apiVersion ?? AZURE_API_VERSION;
  const deployments = options.deployments ?? AZURE_DEPLOYMENTS;
  const bearer = options.bearerToken ?? null;
  let calls = 0;
  let completions = 0;
  const notFound = (): Answer => ({
    kind: "json",
    status: 404,
    body: {
      error: {
        code: "DeploymentNotFound",
        message:
          "The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.",
      },
    },
  });

  const chat = (deployment: string, body: Obj, script: Script): Answer => {
    const model = deployments[deployment];
    if (model === undefined) return notFound();
    const filter = fake.filters.shift() ?? null;
    if (filter === "prompt") return { kind: "json", status: 400, body: contentFilterError() };
    const c = openAIConversation(body);
    let g = generate(c, script(c), () => `call_az${String(++calls).padStart(20, "0")}`);
    let finish: string = g.finish === "stop_sequence" ? "stop" : g.finish;
    if (filter === "completion") {
      g = { ...g, pieces: g.pieces.slice(0, Math.ceil(g.pieces.length / 2)), toolCalls: [] };
      g.completionTokens = g.pieces.length;
      finish = "content_filter";
    }
    const id = `chatcmpl-az${++completions}`;
    const usage = usageOf(g, fake.cachedTokens);
    const cut = finish === "content_filter" ? "violence" : null;
    if (body.stream !== true) {
      return {
        kind: "json",
        status: 200,
        body: sortedKeys(completion(id, model, g, finish, usage, cut)),
      };
    }
    const include = isObj(body.stream_options) && body.stream_options.include_usage === true;
    return {
      kind: "stream",
      events: streamEvents(id, model, g, finish, include ? usage : null, cut),
    };
  };

  /** An OpenAI route of the fake OpenAI upstream behind a deployment: the auth headers Azure's,
   * the body's model the deployment's. */
  const behind = (route: FakeRoute, deployment: string): FakeRoute => ({
    check(headers, body, url) {
      const auth = asOpenAIHeaders(headers, apiKey, bearer);
      const model = deployments[deployment];
      const asSent = isObj(body) && model !== undefined ? { ...body, model } : body;
      return [...auth.bad, ...route.check(auth.headers, asSent, url)];
    },
    answer(body, url) {
      const model = deployments[deployment];
      if (model === undefined) return notFound();
      return route.answer({ ...body, model }, url);
    },
  });

  const style: FakeStyle = {
    path: "/openai/deployments/{deployment}/chat/completions",
    check: () => [],
    answer: () => {
      throw new Error("the fake Azure answers through match()");
    },
    match(url) {
      const responses = RESPONSES_PATH.exec(url.pathname);
      if (responses !== null) {
        const version = url.searchParams.get("api-version");
        const v1 = responses[1] !== undefined;
        return {
          check(headers) {
            const bad = asOpenAIHeaders(headers, apiKey, bearer).bad;
            if (!v1 && version !== apiVersion) bad.push(`api-version: ${JSON.stringify(version)}`);
            if (v1 && version !== null && version !== "preview") bad.push(`api-version ${version}`);
            return bad;
          },
          async answer(body) {
            // The Responses API takes the deployment as the body's model.
            if (deployments[String(body.model)] === undefined) return notFound();
            const answer = await fetch(`${responsesApi.url}/v1/responses`, {
              method: "POST",
              headers: {
                "content-type": "application/json",
                authorization: `Bearer ${responsesApi.apiKey}`,
              },
              body: JSON.stringify(body),
            });
            const text = await answer.text();
            return answer.headers.get("content-type")?.startsWith("text/event-stream")
              ? { kind: "stream", events: sseEvents(text) }
              : { kind: "json", status: answer.status, body: JSON.parse(text) };
          },
        };
      }
      const deployed = DEPLOYMENT_PATH.exec(url.pathname);
      const v1 = deployed === null ? V1_PATH.exec(url.pathname) : null;
      if (deployed === null && v1 === null) return undefined;
      const versionBad: string[] = [];
      const version = url.searchParams.get("api-version");
      if (deployed !== null && version !== apiVersion) {
        versionBad.push(`api-version: ${JSON.stringify(version)}, not ${apiVersion}`);
      }
      if (v1 !== null && version !== null && version !== "preview") {
        versionBad.push(`api-version: the v1 API takes none or "preview", not ${version}`);
      }
      const operation = deployed?.[2] ?? v1![1]!;
      const deploymentOf = (body: unknown) =>
        deployed !== null
          ? decodeURIComponent(deployed[1]!)
          : isObj(body) && typeof body.model === "string"
          ? body.model
          : "";
      if (operation === "chat/completions") {
        return {
          check(headers, body) {
            const auth = asOpenAIHeaders(headers, apiKey, bearer);
            return [...versionBad, ...auth.bad, ...checkOpenAIRequest(auth.headers, body, apiKey)];
          },
          answer: (body) => chat(deploymentOf(body), body, fake.script),
        };
      }
      const deployment = deploymentOf(null);
      const route = operation === "embeddings"
        ? embeddingsRoute(apiKey, azureError)
        : imagesRoute(apiKey);
      const inner = behind(route, deployment);
      return {
        check: (headers, body, url) => [...versionBad, ...inner.check(headers, body, url)],
        answer: inner.answer,
      };
    },
    errorBody: azureError,
    authError: () => ({
      status: 401,
      body: {
        error: {
          code: "401",
          message:
            "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.",
        },
      },
    }),
    streamError: (type, message) =>
      `data: ${JSON.stringify({ error: { message, type, param: null, code: null } })}\n\n`,
  };
  const responsesApi = startFakeOpenAIResponses();
  const upstream = new FakeUpstream(style, { ...options, apiKey });
  const close = upstream.close.bind(upstream);
  const fake = Object.assign(upstream, {
    responses: responsesApi,
    filters: [] as AzureFilter[],
    cachedTokens: 0,
    async close() {
      await close();
      await responsesApi.close();
    },
  });
  return fake;
}

function usageOf(g: Generation, cached: number): Obj {
  return {
    completion_tokens: g.completionTokens,
    completion_tokens_details: {
      accepted_prediction_tokens: 0,
      audio_tokens: 0,
      reasoning_tokens: 0,
      rejected_prediction_tokens: 0,
    },
    prompt_tokens: g.promptTokens,
    prompt_tokens_details: { audio_tokens: 0, cached_tokens: Math.min(cached, g.promptTokens) },
    total_tokens: g.promptTokens + g.completionTokens,
  };
}

function completion(
  id: string,
  model: string,
  g: Generation,
  finish: string,
  usage: Obj,
  cut: string | null,
): Obj {
  const message: Obj = {
    annotations: [],
    content: g.pieces.length === 0 && g.toolCalls.length > 0 ? null : g.pieces.join(""),
    refusal: null,
    role: "assistant",
  };
  if (g.toolCalls.length > 0) {
    message.tool_calls = g.toolCalls.map((c) => ({
      function: { arguments: c.arguments, name: c.name },
      id: c.id,
      type: "function",
    }));
  }
  return {
    choices: [{
      content_filter_results: filterResult(cut),
      finish_reason: finish,
      index: 0,
      logprobs: null,
      message,
    }],
    created: CREATED,
    id,
    model,
    object: "chat.completion",
    prompt_filter_results: promptFilterResults(),
    system_fingerprint: "fp_az0001",
    usage,
  };
}

function streamEvents(
  id: string,
  model: string,
  g: Generation,
  finish: string,
  usage: Obj | null,
  cut: string | null,
): string[] {
  const data = (chunk: Obj) => `data: ${JSON.stringify(sortedKeys(chunk))}\n\n`;
  const base = { created: CREATED, id, model, object: "chat.completion.chunk" };
  const chunk = (delta: Obj, finishReason: string | null, filters: Obj) =>
    data({
      ...base,
      choices: [{
        content_filter_results: filters,
        delta,
        finish_reason: finishReason,
        index: 0,
        logprobs: null,
      }],
      system_fingerprint: "fp_az0001",
    });
  const events = [
    data({
      choices: [],
      created: 0,
      id: "",
      model: "",
      object: "",
      prompt_filter_results: promptFilterResults(),
    }),
    chunk({ content: "", refusal: null, role: "assistant" }, null, {}),
  ];
  for (const piece of g.pieces) events.push(chunk({ content: piece }, null, filterResult()));
  g.toolCalls.forEach((call, index) => {
    events.push(chunk(
      {
        tool_calls: [{
          function: { arguments: "", name: call.name },
          id: call.id,
          index,
          type: "function",
        }],
      },
      null,
      {},
    ));
    for (const piece of fragments(call.arguments, 9)) {
      events.push(chunk({ tool_calls: [{ function: { arguments: piece }, index }] }, null, {}));
    }
  });
  events.push(chunk({}, finish, cut === null ? {} : filterResult(cut)));
  if (usage !== null) {
    events.push(data({ ...base, choices: [], system_fingerprint: "fp_az0001", usage }));
  }
  events.push("data: [DONE]\n\n");
  return events;
}
