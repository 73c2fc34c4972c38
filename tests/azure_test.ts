/**
 * The `azure` style end to end: the official `openai` SDK on the gateway's real port, models
 * behind the fake Azure OpenAI resource (tests/support/fake_azure.ts, which checks the
 * `api-version` and the `api-key` of every call and answers in Azure's bytes, streams written
 * 7 bytes at a time): chat, its stream and usage (cached tokens too), a tool loop, an image
 * input, the Responses API through the canonical model, embeddings; the v1 API and an Entra ID
 * bearer token; the content filter refusing a prompt (a 400 naming the categories) or cutting
 * an answer (`content_filter`); a throttled call retried.
 */
import assert from "node:assert/strict";
import OpenAI from "npm:openai@7.55.0";
import { ADMIN_TOKEN } from "./support/admin.ts";
import { type FakeAzure, type FakeAzureOptions, startFakeAzure } from "./support/fake_azure.ts";
import { startFakeEntra } from "./support/fake_entra.ts";
import { CALL_TIMEOUT_MS, chatError, createKey } from "./support/sdk_gateway.ts";
import { startServer, testConfig, type TestServer } from "./support/server.ts";
import { pngUrl } from "./support/image_fixtures.ts";
import { parseConfig } from "../src/config/parse.ts";
import { checkJpeg, jpegFromDataUrl } from "./support/jpeg_check.ts";
import { fakeBase64, fakeVector } from "./support/fake_openai_embeddings.ts";

const GENEROUS = { per_minute: 100_000, per_day: 1_000_000 };
/** The Entra ID app of the client credentials tests (its secret in `AZ_SECRET`). */
const APP = {
  tenant: "72f988bf-86f1-41af-91ab-2d7cd011db47",
  clientId: "0d3f2c1b-5a4e-4b6c-9d8e-7f6a5b4c3d2e",
  clientSecret: "entra-app-secret-Q~abcdefghijklmnop",
};
const CHAT = { chat_completions: true, function_calling: true, image_input: true };

interface AzureGateway {
  server: TestServer;
  azure: FakeAzure;
  client: OpenAI;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The fake resource and a gateway with `az-chat` (deployment `chat-prod`) and `az-embed`
 * (`embed-prod`) on provider `az`, configured with `provider`'s fields. */
async function startAzureGateway(
  provider: Record<string, unknown> = {},
  fakeOptions: FakeAzureOptions = {},
  sentKey?: string,
  moreEnv: Record<string, string> = {},
): Promise<AzureGateway> {
  const azure = startFakeAzure({ sliceBytes: 7, ...fakeOptions });
  const env: Record<string, string> = {
    AZ_KEY: sentKey ?? azure.apiKey,
    AZ_TOKEN: typeof fakeOptions.bearerToken === "string" ? fakeOptions.bearerToken : "",
    AZ_SECRET: APP.clientSecret,
    SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN,
    ...moreEnv,
  };
  let server: TestServer;
  try {
    server = await startServer({
      config: testConfig((raw) => {
        (raw.providers as unknown[]).push({
          id: "az",
          style: "azure",
          base_url: azure.url,
          api_key_env: "AZ_KEY",
          api_version: "2024-10-21",
          max_retries: 0,
          ...provider,
        });
        (raw.models as unknown[]).push(
          { id: "az-chat", provider: "az", upstream_model: "chat-prod", ...CHAT },
          {
            id: "az-embed",
            provider: "az",
            upstream_model: "embed-prod",
            embeddings: { dimensions: 1536 },
          },
          {
            id: "az-image",
            provider: "az",
            upstream_model: "image-prod",
            image_generation: { sizes: ["1024x1024", "1792x1024", "1024x1792"], max_n: 1 },
          },
        );
        raw.limits = {
          anonymous: { chat: GENEROUS, other: GENEROUS, images: GENEROUS },
          key: { chat: GENEROUS, other: GENEROUS, images: GENEROUS },
        };
      }),
      env: (name) => env[name] || undefined,
    });
  } catch (error) {
    await azure.close();
    throw error;
  }
  const apiKey = await createKey(server);
  const client = new OpenAI({
    baseURL: `${server.url}/v1`,
    apiKey,
    maxRetries: 0,
    timeout: CALL_TIMEOUT_MS,
  });
  return {
    server,
    azure,
    client,
    async [Symbol.asyncDispose]() {
      await server.close();
      await azure.close();
    },
  };
}

const WEATHER: OpenAI.ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

Deno.test("azure: chat through a deployment's path, with api-version and api-key", async () => {
  await using gw = await startAzureGateway();
  const completion = await gw.client.chat.completions.create({
    model: "az-chat",
    messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hello there" }],
    max_tokens: 50,
  });
  assert.equal(completion.model, "az-chat");
  assert.equal(completion.choices[0]!.message.content, "You said: Hello there");
  assert.equal(completion.choices[0]!.finish_reason, "stop");
  assert.equal(completion.usage!.prompt_tokens, 4);
  assert.equal(completion.usage!.completion_tokens, 4);
  assert.deepEqual(gw.azure.violations, []);
  const sent = gw.azure.last;
  assert.equal(sent.path, "/openai/deployments/chat-prod/chat/completions");
  assert.equal(sent.headers.get("api-key"), gw.azure.apiKey);
  assert.equal((sent.body as Record<string, unknown>).max_completion_tokens, 50);
});

Deno.test("azure: a stream arrives whole after Azure's prompt-filter chunk, with its usage and cached tokens", async () => {
  await using gw = await startAzureGateway();
  gw.azure.cachedTokens = 3;
  const stream = await gw.client.chat.completions.create({
    model: "az-chat",
    messages: [{ role: "user", content: "Stream this answer please" }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  let finish: string | null = null;
  let usage: OpenAI.CompletionUsage | null = null;
  for await (const chunk of stream) {
    assert.equal(chunk.model, "az-chat");
    text += chunk.choices[0]?.delta.content ?? "";
    finish = chunk.choices[0]?.finish_reason ?? finish;
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(text, "You said: Stream this answer please");
  assert.equal(finish, "stop");
  assert.equal(usage?.prompt_tokens, 4);
  assert.equal(usage?.completion_tokens, 6);
  assert.equal(usage?.prompt_tokens_details?.cached_tokens, 3);
  assert.deepEqual(gw.azure.violations, []);
});

Deno.test("azure: a tool loop, streamed and not", async () => {
  await using gw = await startAzureGateway();
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: "user", content: "Use get_weather for Paris" },
  ];
  const stream = await gw.client.chat.completions.create({
    model: "az-chat",
    messages,
    tools: [WEATHER],
    stream: true,
  });
  const calls = new Map<number, { id: string; name: string; args: string }>();
  let finish: string | null = null;
  for await (const chunk of stream) {
    for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
      const seen = calls.get(call.index) ?? { id: "", name: "", args: "" };
      seen.id ||= call.id ?? "";
      seen.name ||= call.function?.name ?? "";
      seen.args += call.function?.arguments ?? "";
      calls.set(call.index, seen);
    }
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  assert.equal(finish, "tool_calls");
  const call = calls.get(0)!;
  assert.equal(call.name, "get_weather");
  assert.deepEqual(JSON.parse(call.args), { city: "Paris" });
  messages.push(
    {
      role: "assistant",
      content: null,
      tool_calls: [{
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: call.args },
      }],
    },
    { role: "tool", tool_call_id: call.id, content: "Sunny, 21 C" },
  );
  const answer = await gw.client.chat.completions.create({
    model: "az-chat",
    messages,
    tools: [WEATHER],
  });
  assert.equal(answer.choices[0]!.message.content, "Tool results: Sunny, 21 C");
  assert.deepEqual(gw.azure.violations, []);
});

Deno.test("azure: an image input reaches the deployment", async () => {
  await using gw = await startAzureGateway();
  const url = await pngUrl(null);
  const completion = await gw.client.chat.completions.create({
    model: "az-chat",
    messages: [{
      role: "user",
      content: [
        { type: "text", text: "What is this" },
        { type: "image_url", image_url: { url } },
      ],
    }],
  });
  assert.match(
    completion.choices[0]!.message.content ?? "",
    /I see an image\/png image of \d+ bytes/,
  );
  assert.deepEqual(gw.azure.violations, []);
});

Deno.test("azure: the Responses API, through the canonical model, streamed and not", async () => {
  await using gw = await startAzureGateway();
  const response = await gw.client.responses.create({ model: "az-chat", input: "Hello there" });
  assert.equal(response.output_text, "You said: Hello there");
  assert.equal(response.status, "completed");
  assert.ok(response.usage!.input_tokens > 0);
  const stream = await gw.client.responses.create({
    model: "az-chat",
    input: "Stream it",
    stream: true,
  });
  let text = "";
  let done: OpenAI.Responses.Response | null = null;
  for await (const event of stream) {
    if (event.type === "response.output_text.delta") text += event.delta;
    if (event.type === "response.completed") done = event.response;
  }
  assert.equal(text, "You said: Stream it");
  assert.equal(done?.usage?.output_tokens, 4);
  assert.deepEqual(gw.azure.violations, []);
});

Deno.test("azure: with responses_api, Responses calls pass through to the resource's /openai/responses", async () => {
  await using gw = await startAzureGateway({
    responses_api: true,
    api_version: "2025-04-01-preview",
  }, {
    apiVersion: "2025-04-01-preview",
  });
  const response = await gw.client.responses.create({ model: "az-chat", input: "Hello there" });
  assert.equal(response.model, "az-chat");
  assert.equal(response.output_text, "You said: Hello there");
  const sent = gw.azure.last;
  assert.equal(sent.path, "/openai/responses");
  assert.equal((sent.body as Record<string, unknown>).model, "chat-prod");
  const stream = await gw.client.responses.create({
    model: "az-chat",
    input: "Stream it",
    stream: true,
  });
  let text = "";
  for await (const event of stream) {
    if (event.type === "response.output_text.delta") text += event.delta;
  }
  assert.equal(text, "You said: Stream it");
  assert.deepEqual(gw.azure.violations, []);
  assert.deepEqual(gw.azure.responses.violations, []);
});

Deno.test("azure: embeddings through the embedding deployment", async () => {
  await using gw = await startAzureGateway();
  const result = await gw.client.embeddings.create({
    model: "az-embed",
    input: ["one text", "another text"],
  });
  assert.equal(result.data.length, 2);
  assert.equal(result.data[0]!.embedding.length, 1536);
  assert.equal(result.model, "az-embed");
  assert.deepEqual(gw.azure.violations, []);
  assert.equal(gw.azure.last.path, "/openai/deployments/embed-prod/embeddings");
});

Deno.test("azure: base64 embeddings pass through as Azure wrote them, decoding to the float answer", async () => {
  await using gw = await startAzureGateway();
  const input = ["one text", "another text"];
  const floats = await gw.client.embeddings.create({
    model: "az-embed",
    input,
    encoding_format: "float",
  });
  const response = await fetch(`${gw.server.url}/v1/embeddings`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${gw.client.apiKey}` },
    body: JSON.stringify({ model: "az-embed", input, encoding_format: "base64" }),
  });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  // Azure's vectors, byte for byte: the fake's base64 strings are in the gateway's answer.
  for (const t of input) assert.ok(text.includes(JSON.stringify(fakeBase64(fakeVector(t, 1536)))));
  const answer = JSON.parse(text);
  assert.equal(answer.model, "az-embed");
  assert.equal(answer.usage.prompt_tokens, 4);
  assert.equal((gw.azure.last.body as Record<string, unknown>).encoding_format, "base64");
  assert.equal(gw.azure.last.path, "/openai/deployments/embed-prod/embeddings");
  const decoded = answer.data.map((d: { embedding: string }) => {
    const bytes = Uint8Array.fromBase64(d.embedding);
    const view = new DataView(bytes.buffer);
    return Array.from({ length: bytes.length / 4 }, (_, i) => view.getFloat32(i * 4, true));
  });
  assert.deepEqual(decoded, floats.data.map((d) => d.embedding));
  // The SDK's default (base64 asked for, decoded by the SDK) gives the same floats.
  const defaulted = await gw.client.embeddings.create({ model: "az-embed", input });
  assert.deepEqual(defaulted.data.map((d) => d.embedding), floats.data.map((d) => d.embedding));
  assert.deepEqual(gw.azure.violations, []);
});

Deno.test("azure: an image from the image deployment comes back as a JPEG data URL", async () => {
  await using gw = await startAzureGateway();
  const result = await gw.client.images.generate({
    model: "az-image",
    prompt: "a lighthouse at dusk",
    size: "1792x1024",
  });
  assert.deepEqual(gw.azure.violations, []);
  assert.equal(gw.azure.last.path, "/openai/deployments/image-prod/images/generations");
  const image = checkJpeg(jpegFromDataUrl(result.data![0]!.url!), 1792, 1024);
  assert.ok(image);
});

Deno.test("azure: a prompt the content filter refuses is a 400 content_filter naming the category", async () => {
  await using gw = await startAzureGateway({ max_retries: 2 });
  gw.azure.filters = ["prompt"];
  const error = await gw.client.chat.completions.create({
    model: "az-chat",
    messages: [{ role: "user", content: "Something the filter dislikes" }],
  }).then(() => null, (e: unknown) => e);
  assert.ok(error instanceof OpenAI.BadRequestError, String(error));
  assert.equal(error.status, 400);
  assert.equal(error.code, "content_filter");
  assert.match(error.message, /content management policy.*\(filtered: violence \(medium\)\)/);
  assert.equal(gw.azure.received.length, 1, "a refusal is not retried");
});

Deno.test("azure: an answer the content filter cuts ends with finish_reason content_filter", async () => {
  await using gw = await startAzureGateway();
  gw.azure.filters = ["completion", "completion"];
  const completion = await gw.client.chat.completions.create({
    model: "az-chat",
    messages: [{ role: "user", content: "Tell me a long story now" }],
  });
  assert.equal(completion.choices[0]!.finish_reason, "content_filter");
  const stream = await gw.client.chat.completions.create({
    model: "az-chat",
    messages: [{ role: "user", content: "Tell me a long story now" }],
    stream: true,
  });
  let finish: string | null = null;
  for await (const chunk of stream) finish = chunk.choices[0]?.finish_reason ?? finish;
  assert.equal(finish, "content_filter");
});

Deno.test("azure: a throttled call (429) is retried", async () => {
  await using gw = await startAzureGateway({ max_retries: 2 });
  gw.azure.faults = [{
    status: 429,
    message: "Requests to the ChatCompletions_Create Operation have exceeded call rate limit.",
    headers: { "retry-after-ms": "5" },
  }];
  const completion = await gw.client.chat.completions.create({
    model: "az-chat",
    messages: [{ role: "user", content: "Hello again" }],
  });
  assert.equal(completion.choices[0]!.message.content, "You said: Hello again");
  assert.equal(gw.azure.received.length, 2);
});

Deno.test("azure: a refused api-key is the gateway's 502, the key in no message or log", async () => {
  const wrong = "sk-wrong-azure-key-0123456789";
  await using gw = await startAzureGateway({}, {}, wrong);
  const error = await chatError(gw.client, "az-chat", 502, "Hello");
  assert.match(
    error.message,
    /"az" refused the gateway's credentials \(HTTP 401\); the operator must check its API key \(api_key_env\)/,
  );
  assert.ok(!error.message.includes(wrong));
  assert.ok(!gw.server.output.err.includes(wrong) && !gw.server.output.out.includes(wrong));
});

Deno.test("azure: the v1 API (api_version v1) names the deployment in the body", async () => {
  await using gw = await startAzureGateway({ api_version: "v1" });
  const completion = await gw.client.chat.completions.create({
    model: "az-chat",
    messages: [{ role: "user", content: "Hello v1" }],
  });
  assert.equal(completion.choices[0]!.message.content, "You said: Hello v1");
  assert.deepEqual(gw.azure.violations, []);
  assert.equal(gw.azure.last.path, "/openai/v1/chat/completions");
  assert.equal((gw.azure.last.body as Record<string, unknown>).model, "chat-prod");
});

Deno.test("azure: an Entra ID token from bearer_token_env goes as Authorization: Bearer", async () => {
  await using gw = await startAzureGateway(
    { api_key_env: undefined, bearer_token_env: "AZ_TOKEN" },
    { bearerToken: "entra-token-0123456789" },
  );
  const completion = await gw.client.chat.completions.create({
    model: "az-chat",
    messages: [{ role: "user", content: "Hello token" }],
  });
  assert.equal(completion.choices[0]!.message.content, "You said: Hello token");
  assert.deepEqual(gw.azure.violations, []);
  assert.equal(gw.azure.last.headers.get("authorization"), "Bearer entra-token-0123456789");
});

Deno.test("azure: a refused Entra ID token is a 502 naming bearer_token_env, not an API key", async () => {
  await using gw = await startAzureGateway(
    { api_key_env: undefined, bearer_token_env: "AZ_TOKEN" },
    { bearerToken: "entra-token-0123456789" },
  );
  gw.azure.faults = [{ status: 401, errorType: "invalid_request_error" }];
  const error = await chatError(gw.client, "az-chat", 502, "Hello token");
  assert.match(
    error.message,
    /\(HTTP 401\); the operator must check its Microsoft Entra ID token \(bearer_token_env\)/,
  );
  assert.ok(!error.message.includes("API key") && !error.message.includes("entra-token-0"));
});

Deno.test("azure: the docs page's config is valid and enables its models", () => {
  const page = Deno.readTextFileSync(new URL("../docs/azure.md", import.meta.url));
  const example = JSON.parse(/```json\n([\s\S]*?)```/.exec(page)![1]!);
  const config = parseConfig(example, "docs/azure.md");
  assert.equal(config.providers[0]!.azure!.api_version, "2024-10-21");
});

Deno.test("azure: an Entra ID app's client secret gets a token every call sends, kept, and renewed once Azure refuses it", async () => {
  const entra = startFakeEntra(APP);
  try {
    const app = {
      api_key_env: undefined,
      tenant_id: APP.tenant,
      client_id: APP.clientId,
      client_secret_env: "AZ_SECRET",
      token_url: entra.tokenUrl,
    };
    await using gw = await startAzureGateway(app, { bearerToken: (t) => entra.valid(t) });
    for (const text of ["Hello app", "Hello again"]) {
      const completion = await gw.client.chat.completions.create({
        model: "az-chat",
        messages: [{ role: "user", content: text }],
      });
      assert.equal(completion.choices[0]!.message.content, `You said: ${text}`);
    }
    assert.equal(entra.requests, 1, "one token for both calls");
    assert.deepEqual(gw.azure.violations, []);
    assert.deepEqual(entra.violations, []);
    assert.match(
      gw.azure.last.headers.get("authorization") ?? "",
      /^Bearer eyJ0eXAi.+fake-entra-1-/,
    );
    assert.equal(gw.azure.last.headers.get("api-key"), null);
    // Azure stops taking the token (revoked, or expired early): the call gets a new one.
    entra.revoke();
    const stream = await gw.client.chat.completions.create({
      model: "az-chat",
      stream: true,
      messages: [{ role: "user", content: "Hello renewed" }],
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    assert.equal(text, "You said: Hello renewed");
    assert.equal(entra.requests, 2);
    assert.match(gw.azure.last.headers.get("authorization") ?? "", /fake-entra-2-/);
  } finally {
    await entra.close();
  }
});

Deno.test("azure: a managed identity's tokens from the resource's identity endpoint (the instance metadata service, or App Service's), user-assigned by client_id", async () => {
  const issued = new Set<string>();
  const seen: Record<string, unknown>[] = [];
  const endpoint = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (request) => {
    const url = new URL(request.url);
    seen.push({
      method: request.method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      metadata: request.headers.get("metadata"),
      identity: request.headers.get("x-identity-header"),
    });
    const token = `eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.managed-${seen.length}`;
    issued.add(token);
    // As Azure's endpoints answer: the lifetime in a string.
    return Response.json({
      access_token: token,
      expires_in: "86399",
      resource: "https://cognitiveservices.azure.com",
      token_type: "Bearer",
    });
  });
  const resource = "https://cognitiveservices.azure.com";
  const assigned = "0d3f2c1b-5a4e-4b6c-9d8e-7f6a5b4c3d2e";
  const ask = async (gw: AzureGateway, text: string) => {
    const completion = await gw.client.chat.completions.create({
      model: "az-chat",
      messages: [{ role: "user", content: text }],
    });
    assert.equal(completion.choices[0]!.message.content, `You said: ${text}`);
  };
  try {
    // A VM, a scale set or an AKS node: the instance metadata service (moved for the test).
    {
      await using gw = await startAzureGateway(
        { api_key_env: undefined, managed_identity: true, client_id: assigned },
        { bearerToken: (t) => issued.has(t) },
        undefined,
        { AZURE_POD_IDENTITY_AUTHORITY_HOST: `http://127.0.0.1:${endpoint.addr.port}/` },
      );
      await ask(gw, "Hello identity");
      await ask(gw, "Hello again");
      assert.deepEqual(seen, [{
        method: "GET",
        path: "/metadata/identity/oauth2/token",
        query: { "api-version": "2018-02-01", resource, client_id: assigned },
        metadata: "true",
        identity: null,
      }], "one token for both calls");
      assert.deepEqual(gw.azure.violations, []);
      assert.equal(gw.azure.last.headers.get("api-key"), null);
    }
    // App Service, Functions, Container Apps: the endpoint and its secret header they name.
    {
      await using gw = await startAzureGateway(
        { api_key_env: undefined, managed_identity: true },
        { bearerToken: (t) => issued.has(t) },
        undefined,
        {
          IDENTITY_ENDPOINT: `http://127.0.0.1:${endpoint.addr.port}/msi/token`,
          IDENTITY_HEADER: "identity-header-secret",
        },
      );
      await ask(gw, "Hello app service");
      assert.deepEqual(seen[1], {
        method: "GET",
        path: "/msi/token",
        query: { "api-version": "2019-08-01", resource },
        metadata: null,
        identity: "identity-header-secret",
      });
      assert.deepEqual(gw.azure.violations, []);
      assert.ok(!gw.server.output.err.includes("identity-header-secret"));
    }
  } finally {
    await endpoint.shutdown();
  }
});

Deno.test("azure: on AKS with Workload Identity, the pod's token is the client assertion Entra ID takes, read again at each renewal", async () => {
  const tokenFile = await Deno.makeTempFile({ prefix: "azure-identity-token-" });
  await Deno.writeTextFile(tokenFile, "eyJhbGciOiJSUzI1NiJ9.pod-token-1.sig\n");
  const forms: Record<string, string>[] = [];
  const paths: string[] = [];
  const issued = new Set<string>();
  const entra = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (request) => {
    paths.push(`${request.method} ${new URL(request.url).pathname}`);
    forms.push(Object.fromEntries(new URLSearchParams(await request.text())));
    const token = `eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.workload-${forms.length}`;
    issued.add(token);
    return Response.json({ token_type: "Bearer", expires_in: 3599, access_token: token });
  });
  const tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47";
  const client = "0d3f2c1b-5a4e-4b6c-9d8e-7f6a5b4c3d2e";
  try {
    await using gw = await startAzureGateway(
      { api_key_env: undefined, managed_identity: true },
      { bearerToken: (t) => issued.has(t) },
      undefined,
      {
        AZURE_FEDERATED_TOKEN_FILE: tokenFile,
        AZURE_TENANT_ID: tenant,
        AZURE_CLIENT_ID: client,
        AZURE_AUTHORITY_HOST: `http://127.0.0.1:${entra.addr.port}/`,
        // The instance metadata service is never asked: Workload Identity comes first.
        AZURE_POD_IDENTITY_AUTHORITY_HOST: "http://127.0.0.1:9",
      },
    );
    const ask = async (text: string) => {
      const completion = await gw.client.chat.completions.create({
        model: "az-chat",
        messages: [{ role: "user", content: text }],
      });
      assert.equal(completion.choices[0]!.message.content, `You said: ${text}`);
    };
    await ask("Hello workload");
    await ask("Hello again");
    assert.deepEqual(paths, [`POST /${tenant}/oauth2/v2.0/token`], "one token for both calls");
    assert.deepEqual(forms[0], {
      grant_type: "client_credentials",
      client_id: client,
      scope: "https://cognitiveservices.azure.com/.default",
      client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
      client_assertion: "eyJhbGciOiJSUzI1NiJ9.pod-token-1.sig",
    });
    // Kubernetes rotated the token; Azure stops taking the access token: the renewal sends the
    // new one.
    await Deno.writeTextFile(tokenFile, "eyJhbGciOiJSUzI1NiJ9.pod-token-2.sig");
    issued.clear();
    await ask("Hello renewed");
    assert.equal(forms.length, 2);
    assert.equal(forms[1]!.client_assertion, "eyJhbGciOiJSUzI1NiJ9.pod-token-2.sig");
    // The one violation: the call with the token Azure stopped taking, answered 401.
    assert.deepEqual(gw.azure.violations, ["auth: authorization"]);
    assert.ok(!/pod-token/.test(gw.server.output.err), "no token in the log");
  } finally {
    await entra.shutdown();
    await Deno.remove(tokenFile);
  }
});

Deno.test("azure: a client secret Entra ID refuses is a 502 naming the app's fields, never the secret", async () => {
  const entra = startFakeEntra({ ...APP, clientSecret: "another-secret" });
  try {
    await using gw = await startAzureGateway({
      api_key_env: undefined,
      tenant_id: APP.tenant,
      client_id: APP.clientId,
      client_secret_env: "AZ_SECRET",
      token_url: entra.tokenUrl,
    }, { bearerToken: (t) => entra.valid(t) });
    const error = await chatError(gw.client, "az-chat", 502);
    assert.match(
      error.message,
      /refused its Entra ID app \(HTTP 401 invalid_client\); check tenant_id, client_id and client_secret_env/,
    );
    assert.ok(!error.message.includes(APP.clientSecret) && !error.message.includes("AADSTS"));
    assert.equal(gw.azure.received.length, 0, "no call reached Azure without a token");
    assert.ok(!gw.server.output.err.includes(APP.clientSecret));
  } finally {
    await entra.close();
  }
});
