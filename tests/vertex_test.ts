/**
 * The `vertex` style end to end, over the gateway's real port: a service account made in the
 * test (an RSA key from WebCrypto), the fake Google Cloud (tests/support/fake_vertex.ts: its
 * token endpoint verifies the signed assertion against the account's public key before it
 * issues a token; its model methods take only that token and pass the calls to the fake Gemini
 * and Anthropic upstreams, which check them), streams written 7 bytes at a time.
 *
 * Providers: `vx` (each model's publisher from its name, through the canonical model), `vxa`
 * (`publisher: "anthropic"`: the Messages door passes through) and `vxg` (`publisher:
 * "google"`: the Gemini door passes through). Clients: `@anthropic-ai/sdk` (thinking, a tool
 * loop, the prompt cache), `@google/genai`, `openai`. Then the token: one exchange for many
 * concurrent calls, a new one after a 401 or at expiry, a refused assertion, a throttled call.
 */
import assert from "node:assert/strict";
import Anthropic from "npm:@anthropic-ai/sdk@1.12.0";
import { GoogleGenAI } from "npm:@google/genai@3.3.0";
import OpenAI from "npm:openai@7.55.0";
import { parseConfig } from "../src/config/parse.ts";
import { ADMIN_TOKEN } from "./support/admin.ts";
import {
  type FakeVertex,
  makeServiceAccount,
  METADATA_TOKEN_PATH,
  startFakeVertex,
  STS_PATH,
  SUBJECT_TOKEN_PATH,
  type TestServiceAccount,
  VERTEX_PROJECT,
  VERTEX_REGION,
} from "./support/fake_vertex.ts";
import { startFakeOpenAI } from "./support/fake_openai.ts";
import { fakeVector } from "./support/fake_openai_embeddings.ts";
import { startGatewayProcess } from "./support/gateway_process.ts";
import { dataTempDir, MAIN, ROOT, startFlagsSync, tempConfig } from "./support/process.ts";
import { CALL_TIMEOUT_MS, chatError, createKey } from "./support/sdk_gateway.ts";
import { FAKE_AWS_CREDENTIALS } from "./support/fake_bedrock.ts";
import { pdfBase64 } from "./support/pdf.ts";
import { FakeClock, startServer, testConfig, type TestServer } from "./support/server.ts";

const GENEROUS = { per_minute: 100_000, per_day: 1_000_000 };
const CHAT = { chat_completions: true, function_calling: true, image_input: true };
const CLAUDE = "claude-sonnet-4-5@20250929";
const GEMINI = "gemini-2.5-flash";

interface VertexGateway {
  server: TestServer;
  clock: FakeClock;
  vertex: FakeVertex;
  apiKey: string;
  anthropic(): Anthropic;
  genai(): GoogleGenAI;
  openai(): OpenAI;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The workload identity pool provider the fake trusts, and the account it lets federated
 * workloads impersonate. */
const WIF_AUDIENCE =
  "//iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/eks/providers/oidc";
const WIF_ACCOUNT = "vertex-caller@fake-project-1.iam.gserviceaccount.com";

/** An external_account configuration (as gcloud writes it) for the fake's federation, its
 * subject token from `source`. */
function externalAccount(
  vertex: FakeVertex,
  source: Record<string, unknown>,
  impersonate = true,
): string {
  return JSON.stringify({
    type: "external_account",
    audience: WIF_AUDIENCE,
    subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
    token_url: `${vertex.url}${STS_PATH}`,
    ...(impersonate
      ? {
        service_account_impersonation_url:
          `${vertex.url}/v1/projects/-/serviceAccounts/${WIF_ACCOUNT}:generateAccessToken`,
      }
      : {}),
    credential_source: source,
  });
}

/** The one message of the calls that only need an answer. */
const HELLO = { role: "user", content: "Hello" } as const;

/** Options of {@link startVertexGateway}. */
interface VertexGatewayOptions {
  /** Fields for every vertex provider. */
  provider?: Record<string, unknown>;
  /** The account the gateway signs with (default: the one the fake trusts). */
  signer?: TestServiceAccount;
  /** `VX_SA` instead of the signer's key (an external_account configuration), for the fake. */
  credentials?: (vertex: FakeVertex) => string;
  /** More environment variables. */
  env?: Record<string, string>;
}

async function startVertexGateway(options: VertexGatewayOptions = {}): Promise<VertexGateway> {
  const trusted = await makeServiceAccount();
  const clock = new FakeClock();
  const vertex = startFakeVertex({
    accounts: [trusted],
    sliceBytes: 7,
    federation: { audience: WIF_AUDIENCE, serviceAccount: WIF_ACCOUNT },
    now: () => clock.now(),
  });
  const env: Record<string, string> = {
    VX_SA: options.credentials?.(vertex) ?? (options.signer ?? trusted).json,
    SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN,
    // The fake is also the metadata server of a provider with `metadata_server`.
    GCE_METADATA_HOST: new URL(vertex.url).host,
    ...options.env,
  };
  const provider = (id: string, more: Record<string, unknown> = {}) => ({
    id,
    style: "vertex",
    project: VERTEX_PROJECT,
    region: VERTEX_REGION,
    credentials_env: "VX_SA",
    base_url: vertex.url,
    token_url: vertex.tokenUrl,
    max_retries: 0,
    ...more,
    ...options.provider,
  });
  let server: TestServer;
  try {
    server = await startServer({
      clock,
      config: testConfig((raw) => {
        (raw.providers as unknown[]).push(
          provider("vx"),
          provider("vxa", { publisher: "anthropic" }),
          provider("vxg", { publisher: "google" }),
        );
        (raw.models as unknown[]).push(
          { id: "vx-claude", provider: "vx", upstream_model: CLAUDE, ...CHAT },
          { id: "vx-gemini", provider: "vx", upstream_model: GEMINI, ...CHAT },
          { id: "vxa-claude", provider: "vxa", upstream_model: CLAUDE, ...CHAT },
          { id: "vxg-gemini", provider: "vxg", upstream_model: GEMINI, ...CHAT },
          {
            id: "vx-embed",
            provider: "vx",
            upstream_model: "text-embedding-005",
            embeddings: { dimensions: 768 },
          },
          {
            id: "vx-gemini-embed",
            provider: "vx",
            upstream_model: "gemini-embedding-001",
            embeddings: { dimensions: 3072 },
          },
        );
        raw.limits = {
          anonymous: { chat: GENEROUS, other: GENEROUS, images: GENEROUS },
          key: { chat: GENEROUS, other: GENEROUS, images: GENEROUS },
        };
      }),
      env: (name) => env[name],
    });
  } catch (error) {
    await vertex.close();
    throw error;
  }
  const apiKey = await createKey(server);
  return {
    server,
    clock,
    vertex,
    apiKey,
    anthropic: () =>
      new Anthropic({ baseURL: server.url, apiKey, maxRetries: 0, timeout: CALL_TIMEOUT_MS }),
    genai: () =>
      new GoogleGenAI({
        apiKey,
        apiVersion: "v1beta",
        httpOptions: { baseUrl: server.url, timeout: CALL_TIMEOUT_MS },
      }),
    openai: () =>
      new OpenAI({
        baseURL: `${server.url}/v1`,
        apiKey,
        maxRetries: 0,
        timeout: CALL_TIMEOUT_MS,
      }),
    async [Symbol.asyncDispose]() {
      await server.close();
      await vertex.close();
    },
  };
}

Deno.test("vertex: workload identity federation: the workload's token from a file exchanged at STS, then for its service account's; the file read again at renewal", async () => {
  const dir = await dataTempDir();
  const file = `${dir}/token`;
  try {
    await using gw = await startVertexGateway({
      credentials: (vertex) => {
        Deno.writeTextFileSync(file, `${vertex.subjectToken}\n`);
        return externalAccount(vertex, { file });
      },
    });
    const openai = gw.openai();
    for (const model of ["vx-gemini", "vx-claude"]) {
      const completion = await openai.chat.completions.create({ model, messages: [HELLO] });
      assert.ok(completion.choices[0]!.message.content, model);
    }
    const paths = () =>
      gw.vertex.received.filter((r) => !r.path.includes("/publishers/")).map((r) => r.path);
    assert.deepEqual(paths(), [
      STS_PATH,
      `/v1/projects/-/serviceAccounts/${WIF_ACCOUNT}:generateAccessToken`,
    ]);
    // Vertex refuses the access token: the account's token is asked for again (the federated
    // token still serves).
    gw.vertex.revokeTokens();
    const again = await openai.chat.completions.create({ model: "vx-gemini", messages: [HELLO] });
    assert.ok(again.choices[0]!.message.content);
    assert.equal(paths().length, 3);
    // An hour later both have expired, and Kubernetes has rotated the workload's token: the
    // new file's token goes to STS (the old one it would refuse).
    gw.vertex.subjectToken = "eyJ.fake-workload-token-2";
    await Deno.writeTextFile(file, gw.vertex.subjectToken);
    gw.clock.advance(3600_000);
    const later = await openai.chat.completions.create({ model: "vx-gemini", messages: [HELLO] });
    assert.ok(later.choices[0]!.message.content);
    assert.deepEqual(paths().slice(3), [
      STS_PATH,
      `/v1/projects/-/serviceAccounts/${WIF_ACCOUNT}:generateAccessToken`,
    ]);
    assert.deepEqual(gw.vertex.tokenViolations, []);
    assert.deepEqual(gw.vertex.violations, ["auth: no valid access token"]);
    assert.ok(!/eyJ\.|ya29\./.test(gw.server.output.err), "no token in the log");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("vertex: workload identity federation from a token URL (JSON), the federated token used directly without impersonation", async () => {
  await using gw = await startVertexGateway({
    credentials: (vertex) =>
      externalAccount(vertex, {
        url: `${vertex.url}${SUBJECT_TOKEN_PATH}`,
        headers: { Metadata: "True" },
        format: { type: "json", subject_token_field_name: "access_token" },
      }, false),
  });
  const message = await gw.anthropic().messages.create({
    model: "vx-claude",
    max_tokens: 64,
    messages: [HELLO],
  });
  assert.equal(message.type, "message");
  assert.deepEqual(
    gw.vertex.received.filter((r) => !r.path.includes("/publishers/")).map((r) => r.path),
    [SUBJECT_TOKEN_PATH, STS_PATH],
  );
  assert.deepEqual(gw.vertex.violations, []);
});

/** The AWS source of an external_account configuration; its metadata URLs on `imds`. */
function awsSource(imds?: string): Record<string, unknown> {
  return {
    environment_id: "aws1",
    regional_cred_verification_url:
      "https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15",
    ...(imds
      ? {
        region_url: `${imds}/latest/meta-data/placement/availability-zone`,
        url: `${imds}/latest/meta-data/iam/security-credentials`,
        imdsv2_session_token_url: `${imds}/latest/api/token`,
      }
      : {}),
  };
}

/** An EC2 instance metadata service for the fake AWS keys, IMDSv2 only; what it was asked. */
function startImds() {
  const asked: string[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    asked.push(`${request.method} ${path}`);
    if (request.method === "PUT" && path === "/latest/api/token") {
      return new Response("imds-session-1");
    }
    if (request.headers.get("x-aws-ec2-metadata-token") !== "imds-session-1") {
      return new Response("", { status: 401 });
    }
    if (path === "/latest/meta-data/placement/availability-zone") return new Response("us-east-1c");
    if (path === "/latest/meta-data/iam/security-credentials") return new Response("caller\n");
    if (path === "/latest/meta-data/iam/security-credentials/caller") {
      return Response.json({
        AccessKeyId: FAKE_AWS_CREDENTIALS.accessKeyId,
        SecretAccessKey: FAKE_AWS_CREDENTIALS.secretAccessKey,
        Token: "imds-role-session-token",
      });
    }
    return new Response("", { status: 404 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    asked,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

Deno.test("vertex: workload identity federation from AWS: a GetCallerIdentity signed with the environment's keys, then from the instance metadata service", async () => {
  const aws = (vertex: FakeVertex, imds?: string) =>
    JSON.stringify({
      ...JSON.parse(externalAccount(vertex, awsSource(imds))),
      subject_token_type: "urn:ietf:params:aws:token-type:aws4_request",
    });
  {
    await using gw = await startVertexGateway({
      credentials: (vertex) => aws(vertex),
      env: {
        AWS_REGION: "us-east-1",
        AWS_ACCESS_KEY_ID: FAKE_AWS_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: FAKE_AWS_CREDENTIALS.secretAccessKey,
        AWS_SESSION_TOKEN: "env-session-token",
      },
    });
    const completion = await gw.openai().chat.completions.create({
      model: "vx-gemini",
      messages: [HELLO],
    });
    assert.ok(completion.choices[0]!.message.content);
    assert.deepEqual(gw.vertex.tokenViolations, []);
    assert.equal(gw.vertex.received.filter((r) => r.path === STS_PATH).length, 1);
    assert.ok(!gw.server.output.err.includes("Signature="), "no signature in the log");
  }
  await using imds = startImds();
  await using gw = await startVertexGateway({ credentials: (vertex) => aws(vertex, imds.url) });
  const completion = await gw.openai().chat.completions.create({
    model: "vx-claude",
    messages: [HELLO],
  });
  assert.ok(completion.choices[0]!.message.content);
  assert.deepEqual(gw.vertex.tokenViolations, []);
  assert.deepEqual(imds.asked, [
    "PUT /latest/api/token",
    "GET /latest/meta-data/placement/availability-zone",
    "GET /latest/meta-data/iam/security-credentials",
    "GET /latest/meta-data/iam/security-credentials/caller",
  ]);
});

Deno.test("vertex: workload identity federation refused: STS's error code in the 502, a config error names the field", async () => {
  await using gw = await startVertexGateway({
    credentials: (vertex) =>
      externalAccount(vertex, {
        url: `${vertex.url}${SUBJECT_TOKEN_PATH}`,
        headers: { Metadata: "True" },
      }),
  });
  // Read as text (no format), the URL's JSON answer is not the token STS knows.
  const error = await chatError(gw.openai(), "vx-gemini", 502);
  assert.match(
    error.message,
    /could not authenticate: the token endpoint refused the workload's token \(workload identity federation\) \(HTTP 400 invalid_grant\)/,
  );
  for (
    const [source, field] of [
      [{ environment_id: "aws1" }, /regional_cred_verification_url is not a URL/],
      [{ environment_id: "aws2" }, /environment_id is not "aws1"/],
      [{ executable: { command: "x" } }, /an executable/],
      [{}, /neither a file nor a url/],
      [{ file: "/t", format: { type: "json" } }, /no subject_token_field_name/],
    ] as const
  ) {
    await assert.rejects(
      () =>
        startServer({
          config: testConfig((raw) => {
            (raw.providers as unknown[]).push({
              id: "vw",
              style: "vertex",
              project: VERTEX_PROJECT,
              region: VERTEX_REGION,
              credentials_env: "VW",
            });
          }),
          env: (name) => name === "VW" ? externalAccount(gw.vertex, source) : undefined,
        }),
      (e: Error) => field.test(e.message) && /credentials_env names VW/.test(e.message),
      JSON.stringify(source),
    );
  }
});

Deno.test("vertex: on Google Cloud without a key, the workload's service account from the metadata server, its token renewed when Vertex refuses it", async () => {
  await using gw = await startVertexGateway({
    provider: { credentials_env: null, metadata_server: true },
  });
  const openai = gw.openai();
  for (const model of ["vx-gemini", "vx-claude"]) {
    const completion = await openai.chat.completions.create({ model, messages: [HELLO] });
    assert.ok(completion.choices[0]!.message.content, model);
  }
  assert.equal(gw.vertex.tokenRequests, 1, "one token for every call meanwhile");
  const asked = gw.vertex.received.filter((r) => r.path === METADATA_TOKEN_PATH);
  assert.equal(asked.length, 1);
  assert.equal(asked[0]!.method, "GET");
  // Revoked early: Vertex answers 401, a new token is asked for, and the call is tried again.
  gw.vertex.revokeTokens();
  const again = await openai.chat.completions.create({ model: "vx-gemini", messages: [HELLO] });
  assert.ok(again.choices[0]!.message.content);
  assert.equal(gw.vertex.tokenRequests, 2);
  assert.match(gw.server.output.err, /refused the access token \(HTTP 401\); renewing it/);
  // The one violation is the revoked token's call, which Vertex answered 401.
  assert.deepEqual(gw.vertex.violations, ["auth: no valid access token"]);
  assert.deepEqual(gw.vertex.gemini.violations, []);
  assert.deepEqual(gw.vertex.anthropic.violations, []);
  assert.ok(!gw.server.output.err.includes("ya29."), "no token in the log");
});

/** No fake saw a request that breaks its format. */
function checkFakes(vertex: FakeVertex): void {
  assert.deepEqual(vertex.violations, []);
  assert.deepEqual(vertex.gemini.violations, []);
  assert.deepEqual(vertex.anthropic.violations, []);
  assert.deepEqual(vertex.tokenViolations, []);
}

const WEATHER: Anthropic.Tool = {
  name: "get_weather",
  description: "The weather in a city.",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

for (const model of ["vxa-claude", "vx-claude"]) {
  const how = model === "vxa-claude" ? "passed through" : "through the canonical model";
  Deno.test(`vertex/${model}: Anthropic's SDK, thinking and a tool loop on Vertex Claude (${how})`, async () => {
    await using gw = await startVertexGateway();
    const sdk = gw.anthropic();
    const thinking = { type: "enabled" as const, budget_tokens: 1024 };
    const messages: Anthropic.MessageParam[] = [
      { role: "user", content: "Use get_weather for Paris please" },
    ];
    const first = await sdk.messages.stream({
      model,
      max_tokens: 2048,
      thinking,
      tools: [WEATHER],
      messages,
    }).finalMessage();
    assert.equal(first.model, model);
    const block = first.content[0];
    assert.ok(block?.type === "thinking", JSON.stringify(first.content));
    assert.ok(block.thinking.length > 0 && block.signature.length > 0);
    const call = first.content.find((b) => b.type === "tool_use");
    assert.ok(call?.type === "tool_use");
    assert.deepEqual(call.input, { city: "Paris" });
    assert.equal(first.stop_reason, "tool_use");
    assert.ok(first.usage.input_tokens > 0 && first.usage.output_tokens > 0);
    messages.push({ role: "assistant", content: first.content });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: call.id, content: "Rain" }],
    });
    const second = await sdk.messages.create({
      model,
      max_tokens: 2048,
      thinking,
      tools: [WEATHER],
      messages,
    });
    assert.equal(second.stop_reason, "end_turn");
    const text = second.content.find((b) => b.type === "text");
    assert.ok(text?.type === "text" && text.text === "Tool results: Rain", JSON.stringify(second));
    // The fake Anthropic checked the thinking block's signature when it came back.
    const sent = gw.vertex.last;
    assert.match(
      sent.path,
      /\/publishers\/anthropic\/models\/claude-sonnet-4-5@20250929:rawPredict$/,
    );
    const body = sent.body as Record<string, unknown>;
    assert.equal(body.anthropic_version, "vertex-2023-10-16");
    assert.equal("model" in body, false);
    checkFakes(gw.vertex);
  });

  Deno.test(`vertex/${model}: cache_control reaches Vertex Claude; the cached tokens come back (${how})`, async () => {
    await using gw = await startVertexGateway();
    const sdk = gw.anthropic();
    const params: Anthropic.MessageCreateParamsNonStreaming = {
      model,
      max_tokens: 100,
      system: [{
        type: "text",
        text: "Long shared instructions that every turn repeats word for word.",
        cache_control: { type: "ephemeral" },
      }],
      messages: [{ role: "user", content: "Hello there" }],
    };
    const first = await sdk.messages.create(params);
    assert.ok(first.usage.cache_creation_input_tokens! > 0, JSON.stringify(first.usage));
    const stream = sdk.messages.stream(params);
    const second = await stream.finalMessage();
    assert.ok(second.usage.cache_read_input_tokens! > 0, JSON.stringify(second.usage));
    assert.equal(second.usage.cache_read_input_tokens, first.usage.cache_creation_input_tokens);
    assert.match(gw.vertex.last.path, /:streamRawPredict$/);
    checkFakes(gw.vertex);
  });
}

Deno.test("vertex/vxa-claude: count_tokens goes to Vertex's count-tokens model", async () => {
  await using gw = await startVertexGateway();
  const counted = await gw.anthropic().messages.countTokens({
    model: "vxa-claude",
    messages: [{ role: "user", content: "How many tokens are in this prompt?" }],
  });
  assert.equal(counted.input_tokens, 7);
  assert.match(gw.vertex.last.path, /\/publishers\/anthropic\/models\/count-tokens:rawPredict$/);
  assert.equal((gw.vertex.last.body as Record<string, unknown>).model, CLAUDE);
  checkFakes(gw.vertex);
});

for (const model of ["vxg-gemini", "vx-gemini"]) {
  const how = model === "vxg-gemini" ? "passed through" : "through the canonical model";
  Deno.test(`vertex/${model}: @google/genai on Vertex Gemini, whole and streamed, and a function call (${how})`, async () => {
    await using gw = await startVertexGateway();
    const genai = gw.genai();
    const response = await genai.models.generateContent({
      model,
      contents: "Hello there",
      config: { systemInstruction: "You are terse.", maxOutputTokens: 200 },
    });
    assert.equal(response.text, "You said: Hello there");
    assert.equal(response.modelVersion, model);
    assert.equal(response.candidates?.[0]?.finishReason, "STOP");
    const usage = response.usageMetadata!;
    assert.equal(usage.promptTokenCount, 5);
    assert.equal(usage.candidatesTokenCount, 4);
    const stream = await genai.models.generateContentStream({ model, contents: "Stream please" });
    let text = "";
    let last = null;
    for await (const chunk of stream) {
      text += chunk.text ?? "";
      last = chunk;
    }
    assert.equal(text, "You said: Stream please");
    assert.equal(last?.candidates?.[0]?.finishReason, "STOP");
    assert.equal(last?.usageMetadata?.candidatesTokenCount, 4);
    assert.match(
      gw.vertex.last.path,
      /\/publishers\/google\/models\/gemini-2\.5-flash:streamGenerateContent$/,
    );
    const called = await genai.models.generateContent({
      model,
      contents: "Use get_weather for Paris",
      config: {
        tools: [{
          functionDeclarations: [{
            name: "get_weather",
            parametersJsonSchema: {
              type: "object",
              properties: { city: { type: "string" } },
              required: ["city"],
            },
          }],
        }],
      },
    });
    assert.deepEqual(called.functionCalls?.[0]?.args, { city: "Paris" });
    const counted = await genai.models.countTokens({ model, contents: "Count these five words" });
    assert.ok(counted.totalTokens! > 0);
    checkFakes(gw.vertex);
  });
}

Deno.test("vertex: the openai SDK on Vertex Claude and Vertex Gemini", async () => {
  await using gw = await startVertexGateway();
  for (const model of ["vx-claude", "vx-gemini"]) {
    const stream = await gw.openai().chat.completions.create({
      model,
      messages: [{ role: "user", content: "Hello from OpenAI" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: OpenAI.CompletionUsage | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, "You said: Hello from OpenAI", model);
    assert.ok(usage!.prompt_tokens > 0 && usage!.completion_tokens === 5, model);
  }
  checkFakes(gw.vertex);
});

Deno.test("vertex: concurrent calls share one token exchange", async () => {
  await using gw = await startVertexGateway();
  const sdk = gw.anthropic();
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      sdk.messages.create({
        model: "vxa-claude",
        max_tokens: 50,
        messages: [{ role: "user", content: `Hello number ${i}` }],
      })),
  );
  assert.equal(answers.length, 8);
  assert.equal(gw.vertex.tokenRequests, 1);
  // Cached: later calls exchange nothing more.
  await sdk.messages.create({
    model: "vxa-claude",
    max_tokens: 50,
    messages: [{ role: "user", content: "Once more" }],
  });
  assert.equal(gw.vertex.tokenRequests, 1);
  checkFakes(gw.vertex);
});

Deno.test("vertex: a token refused with 401 is renewed once and the call retried", async () => {
  await using gw = await startVertexGateway();
  const sdk = gw.anthropic();
  const ask = () =>
    sdk.messages.create({
      model: "vxa-claude",
      max_tokens: 50,
      messages: [{ role: "user", content: "Hello" }],
    });
  await ask();
  assert.equal(gw.vertex.tokenRequests, 1);
  gw.vertex.revokeTokens();
  const answer = await ask();
  assert.equal(answer.stop_reason, "end_turn");
  assert.equal(gw.vertex.tokenRequests, 2);
  const statuses = gw.vertex.received.filter((r) => r.path !== "/token").length;
  assert.equal(statuses, 3, "the refused call and its retry");
  assert.match(gw.server.output.err, /refused the access token \(HTTP 401\); renewing it/);
});

Deno.test("vertex: a token refused again after its renewal is a 502, not a loop", async () => {
  await using gw = await startVertexGateway();
  // A first call fetches the token.
  await gw.openai().chat.completions.create({ model: "vx-claude", messages: [HELLO] });
  // The model call, the token exchange (answered), the retried model call.
  gw.vertex.faults = [{ status: 401, errorType: "UNAUTHENTICATED" }, {}, {
    status: 401,
    errorType: "UNAUTHENTICATED",
  }];
  const error = await chatError(gw.openai(), "vx-claude", 502);
  assert.match(error.message, /"vx" refused the gateway's credentials \(HTTP 401\)/);
  assert.equal(gw.vertex.tokenRequests, 2);
  assert.match(gw.server.output.err, /check VX_SA/);
});

Deno.test("vertex: a token is renewed before it expires", async () => {
  await using gw = await startVertexGateway();
  const sdk = gw.openai();
  const ask = () =>
    sdk.chat.completions.create({
      model: "vx-gemini",
      messages: [{ role: "user", content: "Hello" }],
    });
  await ask();
  gw.clock.advance(50 * 60_000);
  await ask();
  assert.equal(gw.vertex.tokenRequests, 1, "50 minutes in, the token still serves");
  gw.clock.advance(6 * 60_000);
  await ask();
  assert.equal(gw.vertex.tokenRequests, 2, "under 5 minutes from expiry, a new one");
  checkFakes(gw.vertex);
});

Deno.test("vertex: an assertion the token endpoint refuses is a 502 naming the provider, no secret shown", async () => {
  const stranger = await makeServiceAccount(undefined, "stranger");
  await using gw = await startVertexGateway({ signer: stranger });
  const error = await chatError(gw.openai(), "vx-claude", 502);
  assert.match(
    error.message,
    /"vx" could not authenticate: the token endpoint refused its service account \(HTTP 400 invalid_grant\)/,
  );
  assert.equal(gw.vertex.tokenRequests, 1);
  assert.equal(gw.vertex.received.filter((r) => r.path !== "/token").length, 0);
  const key = JSON.parse(stranger.json).private_key as string;
  const secret = key.split("\n")[1]!;
  for (const text of [error.message, gw.server.output.err, gw.server.output.out]) {
    assert.ok(!text.includes(secret), "no private key");
    assert.ok(!text.includes("eyJ"), "no assertion");
  }
});

Deno.test("vertex: a throttled call (429 RESOURCE_EXHAUSTED) is retried", async () => {
  await using gw = await startVertexGateway({ provider: { max_retries: 2 } });
  const ask = () =>
    gw.anthropic().messages.create({
      model: "vxa-claude",
      max_tokens: 50,
      messages: [{ role: "user", content: "Hello" }],
    });
  await ask(); // the token is fetched: the fault below is the model call's
  gw.vertex.faults = [{
    status: 429,
    errorType: "RESOURCE_EXHAUSTED",
    message:
      "Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model.",
    headers: { "retry-after-ms": "5" },
  }];
  const answer = await ask();
  assert.equal(answer.stop_reason, "end_turn");
  assert.equal(gw.vertex.received.filter((r) => r.path !== "/token").length, 3);
  assert.equal(gw.vertex.tokenRequests, 1);
  checkFakes(gw.vertex);
});

/** The float32 values of an OpenAI base64 embedding. */
function floatsOf(base64: string): number[] {
  const bytes = Uint8Array.fromBase64(base64);
  const view = new DataView(bytes.buffer);
  return Array.from({ length: bytes.length / 4 }, (_, i) => view.getFloat32(i * 4, true));
}

/** The model calls (not token exchanges) the fake Vertex received. */
function modelCalls(vertex: FakeVertex) {
  return vertex.received.filter((r) => r.path !== "/token");
}

Deno.test("vertex embeddings: openai's embeddings.create on text-embedding-005 (single, dimensions, base64)", async () => {
  await using gw = await startVertexGateway();
  const sdk = gw.openai();
  const single = await sdk.embeddings.create({
    model: "vx-embed",
    input: "the quick brown fox",
    encoding_format: "float",
  });
  assert.equal(single.model, "vx-embed");
  assert.equal(single.data.length, 1);
  assert.deepEqual(single.data[0]!.embedding, fakeVector("the quick brown fox", 768));
  assert.deepEqual(single.usage, { prompt_tokens: 4, total_tokens: 4 });
  const call = gw.vertex.last;
  assert.match(call.path, /\/publishers\/google\/models\/text-embedding-005:predict$/);
  assert.deepEqual(call.body, { instances: [{ content: "the quick brown fox" }] });

  const shorter = await sdk.embeddings.create({
    model: "vx-embed",
    input: ["one two", "three"],
    dimensions: 256,
    encoding_format: "float",
  });
  assert.equal(shorter.data[1]!.embedding.length, 256);
  assert.deepEqual((gw.vertex.last.body as Record<string, unknown>).parameters, {
    outputDimensionality: 256,
  });

  const base64 = await sdk.embeddings.create({
    model: "vx-embed",
    input: ["one two", "three"],
    dimensions: 256,
    encoding_format: "base64",
  });
  const encoded = base64.data.map((d) => d.embedding as unknown as string);
  assert.ok(encoded.every((e) => typeof e === "string"), "base64 strings");
  assert.deepEqual(encoded.map(floatsOf), shorter.data.map((d) => d.embedding));
  assert.equal(base64.usage.prompt_tokens, 3);
  // The SDK's own default (base64 asked for, decoded by the SDK) gives the same floats.
  const defaulted = await sdk.embeddings.create({
    model: "vx-embed",
    input: ["one two", "three"],
    dimensions: 256,
  });
  assert.deepEqual(defaulted.data.map((d) => d.embedding), shorter.data.map((d) => d.embedding));
  checkFakes(gw.vertex);
});

Deno.test("vertex embeddings: a batch over 250 inputs takes several :predict calls, in order; task_type reaches Vertex", async () => {
  await using gw = await startVertexGateway();
  const texts = Array.from({ length: 300 }, (_, i) => `document number ${i}`);
  const result = await gw.openai().embeddings.create({
    model: "vx-embed",
    input: texts,
    encoding_format: "float",
    // The extension field the Gemini embeddings take too.
    task_type: "RETRIEVAL_DOCUMENT",
  } as OpenAI.EmbeddingCreateParams);
  assert.equal(result.data.length, 300);
  result.data.forEach((d, i) => {
    assert.equal(d.index, i);
    assert.deepEqual(d.embedding, fakeVector(`RETRIEVAL_DOCUMENT:${texts[i]}`, 768));
  });
  assert.deepEqual(result.usage, { prompt_tokens: 900, total_tokens: 900 });
  const calls = modelCalls(gw.vertex);
  assert.deepEqual(
    calls.map((c) => ((c.body as Record<string, unknown>).instances as unknown[]).length),
    [250, 50],
  );
  const first = (calls[0]!.body as { instances: Record<string, unknown>[] }).instances[0]!;
  assert.deepEqual(first, { content: "document number 0", task_type: "RETRIEVAL_DOCUMENT" });
  checkFakes(gw.vertex);
});

Deno.test("vertex embeddings: gemini-embedding-001 takes one instance a call", async () => {
  await using gw = await startVertexGateway();
  const result = await gw.openai().embeddings.create({
    model: "vx-gemini-embed",
    input: ["alpha beta", "gamma", "delta epsilon zeta"],
    dimensions: 1536,
    encoding_format: "float",
  });
  assert.deepEqual(
    result.data.map((d) => d.embedding),
    ["alpha beta", "gamma", "delta epsilon zeta"].map((t) => fakeVector(t, 1536)),
  );
  assert.equal(result.usage.prompt_tokens, 6);
  assert.equal(modelCalls(gw.vertex).length, 3);
  checkFakes(gw.vertex);
});

Deno.test("vertex embeddings: token ids are a 400 naming the input", async () => {
  await using gw = await startVertexGateway();
  const error = await gw.openai().embeddings.create({
    model: "vx-embed",
    input: [[1, 2, 3]],
    encoding_format: "float",
  }).then(() => null, (e: unknown) => e);
  assert.ok(error instanceof OpenAI.APIError, String(error));
  assert.equal(error.status, 400);
  assert.match(error.message, /input\[0\]/);
  assert.equal(modelCalls(gw.vertex).length, 0);
});

Deno.test("vertex/vxg-gemini: a countTokens body with generateContentRequest reaches Vertex as its CountTokensRequest", async () => {
  await using gw = await startVertexGateway();
  const response = await fetch(`${gw.server.url}/v1beta/models/vxg-gemini:countTokens`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-goog-api-key": gw.apiKey },
    body: JSON.stringify({
      generateContentRequest: {
        model: "models/vxg-gemini",
        contents: [{ role: "user", parts: [{ text: "Count these five words" }] }],
        systemInstruction: { parts: [{ text: "You are terse." }] },
      },
    }),
  });
  const answer = await response.json();
  assert.equal(response.status, 200, JSON.stringify(answer));
  assert.ok(answer.totalTokens > 0);
  const sent = gw.vertex.last;
  assert.match(sent.path, /\/publishers\/google\/models\/gemini-2\.5-flash:countTokens$/);
  const body = sent.body as Record<string, unknown>;
  assert.equal("generateContentRequest" in body, false);
  assert.equal(
    body.model,
    `projects/${VERTEX_PROJECT}/locations/${VERTEX_REGION}/publishers/google/models/${GEMINI}`,
  );
  assert.deepEqual(body.systemInstruction, { parts: [{ text: "You are terse." }] });
  checkFakes(gw.vertex);
});

Deno.test("vertex: a token endpoint that throttles or fails (429, 503) is retried within the call", async () => {
  await using gw = await startVertexGateway({ provider: { max_retries: 2 } });
  gw.vertex.faults = [
    { status: 429, errorType: "RESOURCE_EXHAUSTED", headers: { "retry-after-ms": "5" } },
    { status: 503, errorType: "UNAVAILABLE", headers: { "retry-after-ms": "5" } },
  ];
  const answer = await gw.anthropic().messages.create({
    model: "vxa-claude",
    max_tokens: 50,
    messages: [{ role: "user", content: "Hello" }],
  });
  assert.equal(answer.stop_reason, "end_turn");
  assert.equal(gw.vertex.received.filter((r) => r.path === "/token").length, 3);
  assert.equal(modelCalls(gw.vertex).length, 1);
  assert.match(gw.server.output.err, /no access token yet: the token endpoint failed \(HTTP 429/);
  checkFakes(gw.vertex);
});

Deno.test("vertex: a token endpoint still failing after max_retries is a 502 naming it", async () => {
  await using gw = await startVertexGateway({ provider: { max_retries: 1 } });
  const unavailable = {
    status: 503,
    errorType: "UNAVAILABLE",
    headers: { "retry-after-ms": "5" },
  };
  gw.vertex.faults = [unavailable, unavailable];
  const error = await chatError(gw.openai(), "vx-gemini", 502);
  assert.match(error.message, /"vx" could not authenticate: the token endpoint failed \(HTTP 503/);
  assert.equal(gw.vertex.received.filter((r) => r.path === "/token").length, 2);
  assert.equal(modelCalls(gw.vertex).length, 0);
});

Deno.test("vertex: a 403 from Vertex names the service account, not an API key", async () => {
  await using gw = await startVertexGateway();
  // A first call fetches the token.
  await gw.openai().chat.completions.create({ model: "vx-gemini", messages: [HELLO] });
  gw.vertex.faults = [{
    status: 403,
    errorType: "PERMISSION_DENIED",
    message: "Permission 'aiplatform.endpoints.predict' denied on resource.",
  }];
  const error = await chatError(gw.openai(), "vx-gemini", 502);
  assert.match(
    error.message,
    /"vx" refused the gateway's credentials \(HTTP 403\); the operator must check its service account \(credentials_env\)/,
  );
  assert.ok(!/API key/.test(error.message), error.message);
});

Deno.test("vertex: the docs page's config is valid and, with a key, enables its models", async () => {
  const page = await Deno.readTextFile(new URL("../docs/vertex.md", import.meta.url));
  const example = JSON.parse(/```json\n([\s\S]*?)```/.exec(page)![1]!);
  const account = await makeServiceAccount();
  await using server = await startServer({
    config: parseConfig(example, "docs/vertex.md"),
    env: (name) => name === "VERTEX_SERVICE_ACCOUNT" ? account.json : undefined,
  });
  const listed = await (await fetch(`${server.url}/v1/models`)).json();
  const ids = (listed.data as { id: string }[]).map((m) => m.id);
  assert.ok(ids.includes("claude-sonnet-4-5") && ids.includes("gemini-2.5-pro"), ids.join());
});

/** The vertex provider of a process's config, over `vertex`. */
function processProvider(vertex: FakeVertex): Record<string, unknown> {
  return {
    id: "vx",
    style: "vertex",
    project: VERTEX_PROJECT,
    region: VERTEX_REGION,
    credentials_env: "VX_SA",
    base_url: vertex.url,
    token_url: vertex.tokenUrl,
  };
}

Deno.test("vertex process: with the start task's permissions, a key file under data/ serves", async () => {
  const account = await makeServiceAccount();
  await using vertex = startFakeVertex({ accounts: [account] });
  await using openai = startFakeOpenAI();
  const keys = await dataTempDir();
  try {
    await Deno.writeTextFile(`${keys}/vertex-sa.json`, account.json);
    const gateway = await startGatewayProcess(openai, vertex.anthropic, {
      providers: [processProvider(vertex)],
      models: [{ id: "vx-claude", provider: "vx", upstream_model: CLAUDE, chat_completions: true }],
      env: { VX_SA: `${keys}/vertex-sa.json` },
    });
    try {
      const response = await fetch(`${gateway.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
        body: JSON.stringify({
          model: "vx-claude",
          max_tokens: 50,
          messages: [{ role: "user", content: "Hello from a process" }],
        }),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
      const answer = await response.json();
      assert.equal(response.status, 200, JSON.stringify(answer));
      assert.equal(answer.content[0].text, "You said: Hello from a process");
    } finally {
      await gateway.stop();
    }
    checkFakes(vertex);
  } finally {
    await Deno.remove(keys, { recursive: true });
  }
});

Deno.test("vertex process: a key file outside data/ stops the start with an error naming the variable", async () => {
  const account = await makeServiceAccount();
  await using vertex = startFakeVertex({ accounts: [account] });
  const outside = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(outside, account.json);
    await using config = await tempConfig({
      server: { hostname: "127.0.0.1", port: 0 },
      providers: [processProvider(vertex)],
      models: [{ id: "vx-claude", provider: "vx", upstream_model: CLAUDE, chat_completions: true }],
    });
    const run = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...startFlagsSync(), MAIN, "--config", config.path],
      cwd: ROOT,
      env: { NO_COLOR: "1", VX_SA: outside, SWITCHYARD_KV: ":memory:" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(run.stderr);
    assert.notEqual(run.code, 0);
    assert.match(
      stderr,
      /provider "vx": credentials_env names VX_SA, whose file ".*" is a path which the gateway is not allowed to read/,
    );
    assert.ok(!stderr.includes("PRIVATE KEY") && !/\bat .*\.ts:\d+/.test(stderr), stderr);
  } finally {
    await Deno.remove(outside);
  }
});

Deno.test("vertex: Claude takes a PDF inline; one by URL, which Vertex refuses, is a 400 naming the field", async () => {
  await using gw = await startVertexGateway();
  const pdf = pdfBase64(1);
  const post = (source: Record<string, unknown>, stream = false) =>
    fetch(`${gw.server.url}/v1/messages`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
        "x-api-key": gw.apiKey,
      },
      body: JSON.stringify({
        model: "vx-claude",
        max_tokens: 64,
        stream,
        messages: [{
          role: "user",
          content: [{ type: "text", text: "Read it." }, { type: "document", source }],
        }],
      }),
    });
  const inline = await post({ type: "base64", media_type: "application/pdf", data: pdf });
  assert.equal(inline.status, 200, await inline.clone().text());
  await inline.body?.cancel();
  const sent = gw.vertex.anthropic.last.body as { messages: { content: unknown[] }[] };
  assert.deepEqual(sent.messages[0]!.content[1], {
    type: "document",
    source: { type: "base64", media_type: "application/pdf", data: pdf },
  });
  const calls = gw.vertex.received.length;
  for (const stream of [false, true]) {
    const byUrl = await post({ type: "url", url: "https://files.example.test/a.pdf" }, stream);
    assert.equal(byUrl.status, 400);
    const error = (await byUrl.json()).error;
    assert.match(error.message, /^messages\.0\.content\.1\.file\.file_url: .*not by URL/);
  }
  assert.equal(gw.vertex.received.length, calls, "refused before any call");
});
