/**
 * A fake Google Cloud for the `vertex` style: an OAuth 2.0 token endpoint (`POST /token`) that
 * takes a service account's signed JWT assertion only when its RS256 signature verifies
 * against that account's public key (and its claims are right), and answers it with an access
 * token and its `expires_in`; and Vertex AI's model methods, which take only such a token:
 *
 * - `/v1/projects/{p}/locations/{l}/publishers/google/models/{m}:generateContent` and
 *   `:streamGenerateContent?alt=sse` (and `:countTokens`), passed to a fake Gemini upstream (fake_gemini.ts, whose
 *   checkers and script answer them) and answered with its bytes, Vertex's `createTime` added
 *   (a `:countTokens` body checked as Vertex's CountTokensRequest first: no
 *   `generateContentRequest`, `model` the resource name);
 * - `.../publishers/google/models/{m}:predict` of Google's text embedding models
 *   (`text-embedding-005`, `text-multilingual-embedding-002`, `gemini-embedding-001`), checked
 *   and answered in Vertex's documented shapes;
 * - `.../publishers/anthropic/models/{m}:rawPredict` and `:streamRawPredict` (a Messages body
 *   without `model`, with `anthropic_version: "vertex-2023-10-16"`, `stream` as the method
 *   says) and `.../models/count-tokens:rawPredict`, passed to a fake Anthropic upstream
 *   (fake_anthropic.ts) as the Messages API call they are.
 *
 * With `federation`, it is also Google's Security Token Service (`POST /v1/token`, a token
 * exchange of the workload's token it knows now), the IAM Credentials API's
 * `generateAccessToken` of the account federated workloads may impersonate (with a federated
 * token), and a subject token URL (`GET /subject-token`, with `Metadata: True`).
 *
 * The fake is a {@link FakeUpstream}: faults, received requests and slicing (`sliceBytes`)
 * apply to what the gateway sees; the inner fakes' own violations are in theirs.
 */
import { type FakeAnthropic, startFakeAnthropic } from "./fake_anthropic.ts";
import { awsSignature, FAKE_AWS_CREDENTIALS } from "./fake_bedrock.ts";
import { type FakeGemini, startFakeGemini } from "./fake_gemini.ts";
import { fakeVector } from "./fake_openai_embeddings.ts";
import { type Answer, type FakeOptions, type FakeStyle, FakeUpstream } from "./fake_upstream.ts";

type Obj = Record<string, unknown>;

/** The project and region the fake serves. */
export const VERTEX_PROJECT = "fake-project-1";
export const VERTEX_REGION = "us-east5";
/** The Messages API version Vertex's Claude models take in the body. */
const VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16";
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/** The metadata server's path for the attached service account's access token. */
export const METADATA_TOKEN_PATH = "/computeMetadata/v1/instance/service-accounts/default/token";
const SCOPE = "https://www.googleapis.com/auth/cloud-platform";
/** Workload identity federation: the Security Token Service's path, the path of the IAM
 * Credentials API's `generateAccessToken` of an account, and a subject token URL's path (as an
 * Azure managed identity's endpoint would give the workload's token). */
export const STS_PATH = "/v1/token";
const IMPERSONATE_PATH = /^\/v1\/projects\/-\/serviceAccounts\/([^/:]+):generateAccessToken$/;
export const SUBJECT_TOKEN_PATH = "/subject-token";
const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const JWT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt";
/** An AWS workload's subject token type: a signed GetCallerIdentity request. */
export const AWS_TOKEN_TYPE = "urn:ietf:params:aws:token-type:aws4_request";

/** A service account made for a test: its key file's JSON, and the public key of its key. */
export interface TestServiceAccount {
  /** The key file's JSON, as Google Cloud's console downloads it. */
  json: string;
  email: string;
  publicKey: CryptoKey;
}

/** Makes a service account with a new 2048-bit RSA key (WebCrypto), whose `token_uri` is
 * `tokenUrl`. */
export async function makeServiceAccount(
  tokenUrl = "https://oauth2.googleapis.com/token",
  name = "switchyard",
): Promise<TestServiceAccount> {
  const pair = await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign", "verify"],
  );
  const der = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  const lines = der.toBase64().match(/.{1,64}/g)!.join("\n");
  const email = `${name}@${VERTEX_PROJECT}.iam.gserviceaccount.com`;
  const json = JSON.stringify(
    {
      type: "service_account",
      project_id: VERTEX_PROJECT,
      private_key_id: "0123456789abcdef0123456789abcdef01234567",
      private_key: `-----BEGIN PRIVATE KEY-----\n${lines}\n-----END PRIVATE KEY-----\n`,
      client_email: email,
      client_id: "123456789012345678901",
      auth_uri: "https://accounts.google.com/o/oauth2/auth",
      token_uri: tokenUrl,
      universe_domain: "googleapis.com",
    },
    null,
    2,
  );
  return { json, email, publicKey: pair.publicKey };
}

/** Options of {@link startFakeVertex}. */
export interface FakeVertexOptions extends FakeOptions {
  /** The service accounts whose assertions it takes. */
  accounts: TestServiceAccount[];
  /** The `expires_in` of the tokens it issues (default 3599). */
  expiresIn?: number;
  /** Workload identity federation: the pool provider it trusts (`audience`) and the service
   * account federated workloads may impersonate. */
  federation?: { audience: string; serviceAccount: string };
  /** The time its `expireTime`s count from (default the system's), a test's fake clock. */
  now?: () => number;
}

/** A running fake Google Cloud. */
export interface FakeVertex extends FakeUpstream {
  /** The token endpoint (a provider's `token_url`). */
  readonly tokenUrl: string;
  /** The Gemini and Anthropic fakes behind Vertex's paths. */
  readonly gemini: FakeGemini;
  readonly anthropic: FakeAnthropic;
  /** Assertions exchanged so far (successful or not). */
  readonly tokenRequests: number;
  /** What was wrong with the assertions refused so far. */
  readonly tokenViolations: string[];
  /** Forgets every token issued (as when they expire early): calls with them get 401s. */
  revokeTokens(): void;
  /** The `expires_in` of the next tokens. */
  expiresIn: number;
  /** The workload's token the Security Token Service takes now (and the subject token URL
   * gives); a test rotates it. */
  subjectToken: string;
}

const decoder = new TextDecoder();

/** Verifies an assertion; returns what is wrong with it (empty when it is right). */
async function checkAssertion(
  assertion: string,
  accounts: TestServiceAccount[],
  tokenUrl: string,
): Promise<string[]> {
  const parts = assertion.split(".");
  if (parts.length !== 3) return ["assertion: not a JWT"];
  let header: Obj;
  let claims: Obj;
  try {
    header = JSON.parse(
      decoder.decode(Uint8Array.fromBase64(parts[0]!, { alphabet: "base64url" })),
    );
    claims = JSON.parse(
      decoder.decode(Uint8Array.fromBase64(parts[1]!, { alphabet: "base64url" })),
    );
  } catch {
    return ["assertion: header or claims not base64url JSON"];
  }
  const bad: string[] = [];
  if (header.alg !== "RS256" || header.typ !== "JWT") bad.push("assertion: alg RS256, typ JWT");
  const account = accounts.find((a) => a.email === claims.iss);
  if (!account) return [...bad, `assertion: unknown issuer ${claims.iss}`];
  if (claims.aud !== tokenUrl) bad.push(`assertion: aud ${claims.aud}, not ${tokenUrl}`);
  if (claims.scope !== SCOPE) bad.push(`assertion: scope ${claims.scope}`);
  const iat = claims.iat;
  const exp = claims.exp;
  if (typeof iat !== "number" || typeof exp !== "number" || exp <= iat || exp - iat > 3600) {
    bad.push("assertion: iat and exp (at most an hour apart)");
  }
  const signature = Uint8Array.fromBase64(parts[2]!, { alphabet: "base64url" });
  const signed = new TextEncoder().encode(`${parts[0]}.${parts[1]}`);
  const ok = await crypto.subtle.verify("RSASSA-PKCS1-v1_5", account.publicKey, signature, signed);
  if (!ok) bad.push("assertion: Invalid JWT Signature.");
  return bad;
}

/** A model method's path on Vertex. */
const MODEL_PATH =
  /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic)\/models\/([^/:]+):([A-Za-z]+)$/;

/** Splits an SSE body into its events (each with its blank line). */
function sseEvents(text: string): string[] {
  return text.match(/[\s\S]*?(?:\r\n\r\n|\n\n)/g) ?? [];
}

/** Google's error body. */
function googleError(status: number, type: string, message: string): Obj {
  const names: Record<number, string> = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
  };
  const name = /^[A-Z_]+$/.test(type) ? type : names[status] ?? "UNKNOWN";
  return { error: { code: status, message, status: name } };
}

/** Starts a fake Google Cloud on a free port; its `url` is a vertex provider's `base_url`. */
export function startFakeVertex(options: FakeVertexOptions): FakeVertex {
  const gemini = startFakeGemini();
  const anthropic = startFakeAnthropic();
  const issued = new Set<string>();
  /** Tokens of the Security Token Service (which impersonation takes). */
  const federated = new Set<string>();
  let tokens = 0;

  /** Passes a call to an inner fake; its answer as the fake's. */
  const forward = async (
    inner: FakeUpstream,
    path: string,
    headers: Record<string, string>,
    body: Obj,
    google: boolean,
  ): Promise<Answer> => {
    const response = await fetch(inner.url + path, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.headers.get("content-type")?.startsWith("text/event-stream")) {
      const events = sseEvents(text);
      return { kind: "stream", events: google ? events.map(withCreateTime) : events };
    }
    const parsed = JSON.parse(text);
    return {
      kind: "json",
      status: response.status,
      body: google && response.ok ? vertexChunk(parsed) : parsed,
    };
  };

  const style: FakeStyle = {
    path: "/v1/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}",
    check: () => [],
    answer: () => {
      throw new Error("the fake Vertex answers through match()");
    },
    match(url) {
      if (url.pathname === METADATA_TOKEN_PATH) {
        // The metadata server of a Google Cloud workload: the attached account's token, to a
        // GET that carries Metadata-Flavor: Google (and no Authorization).
        return {
          method: "GET",
          check(headers) {
            const bad: string[] = [];
            if (headers.get("metadata-flavor") !== "Google") {
              bad.push(`metadata: Metadata-Flavor ${headers.get("metadata-flavor")}`);
            }
            if (headers.has("authorization")) bad.push("metadata: an Authorization header");
            return bad;
          },
          answer: () => {
            tokens++;
            const token = `ya29.c.fake-metadata-token-${tokens}-${crypto.randomUUID()}`;
            issued.add(token);
            return {
              kind: "json",
              status: 200,
              body: { access_token: token, expires_in: fake.expiresIn, token_type: "Bearer" },
            };
          },
        };
      }
      if (url.pathname === SUBJECT_TOKEN_PATH) {
        return {
          method: "GET",
          check: (headers) =>
            headers.get("metadata") === "True" ? [] : ["subject token: no Metadata: True"],
          answer: () => ({
            kind: "json",
            status: 200,
            body: { access_token: fake.subjectToken, token_type: "Bearer" },
          }),
        };
      }
      if (url.pathname === STS_PATH && options.federation) {
        const { audience } = options.federation;
        return {
          check(headers, body) {
            const bad: string[] = [];
            if (headers.get("content-type") !== "application/x-www-form-urlencoded") {
              bad.push(`sts: content-type ${headers.get("content-type")}`);
            }
            if (headers.has("authorization")) bad.push("sts: an Authorization header");
            const form = new URLSearchParams(String(body));
            const want: Record<string, string> = {
              grant_type: TOKEN_EXCHANGE,
              audience,
              scope: SCOPE,
              requested_token_type: "urn:ietf:params:oauth:token-type:access_token",
            };
            for (const [name, value] of Object.entries(want)) {
              if (form.get(name) !== value) bad.push(`sts: ${name} ${form.get(name)}`);
            }
            const type = form.get("subject_token_type");
            if (type !== JWT_TOKEN_TYPE && type !== AWS_TOKEN_TYPE) {
              bad.push(`sts: subject_token_type ${type}`);
            }
            return bad;
          },
          answer: async (body) => {
            tokens++;
            const form = new URLSearchParams(String(body));
            const known = form.get("subject_token_type") === AWS_TOKEN_TYPE
              ? await checkAwsIdentity(form.get("subject_token") ?? "", audience)
              : form.get("subject_token") === fake.subjectToken
              ? []
              : ["sts: a subject token it does not know"];
            fake.tokenViolations.push(...known);
            if (known.length > 0) {
              return {
                kind: "json",
                status: 400,
                body: { error: "invalid_grant", error_description: "The token is expired." },
              };
            }
            const token = `ya29.d.fake-federated-${tokens}-${crypto.randomUUID()}`;
            issued.add(token);
            federated.add(token);
            return {
              kind: "json",
              status: 200,
              body: {
                access_token: token,
                issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
                token_type: "Bearer",
                expires_in: fake.expiresIn,
              },
            };
          },
        };
      }
      const impersonate = IMPERSONATE_PATH.exec(url.pathname);
      if (impersonate !== null && options.federation) {
        const email = decodeURIComponent(impersonate[1]!);
        return {
          check(headers, body) {
            const bad: string[] = [];
            const auth = headers.get("authorization") ?? "";
            if (!federated.has(auth.replace(/^Bearer /, ""))) {
              bad.push("impersonation: no federated token");
            }
            if (email !== options.federation!.serviceAccount) {
              bad.push(`impersonation: account ${email}`);
            }
            const b = body as Obj;
            if (JSON.stringify(b.scope) !== JSON.stringify([SCOPE])) {
              bad.push(`impersonation: scope ${JSON.stringify(b.scope)}`);
            }
            if (typeof b.lifetime !== "string" || !/^\d+s$/.test(b.lifetime)) {
              bad.push(`impersonation: lifetime ${b.lifetime}`);
            }
            return bad;
          },
          answer: (body) => {
            tokens++;
            const seconds = Number(String(body.lifetime).slice(0, -1));
            const token = `ya29.c.fake-impersonated-${tokens}-${crypto.randomUUID()}`;
            issued.add(token);
            return {
              kind: "json",
              status: 200,
              body: {
                accessToken: token,
                expireTime: new Date((options.now ?? Date.now)() + seconds * 1000).toISOString(),
              },
            };
          },
        };
      }
      if (url.pathname === "/token") {
        return {
          check(headers, body) {
            const bad: string[] = [];
            if (headers.get("content-type") !== "application/x-www-form-urlencoded") {
              bad.push(`token: content-type ${headers.get("content-type")}`);
            }
            if (typeof body !== "string") bad.push("token: the body is not a form");
            return bad;
          },
          answer: async (body) => {
            tokens++;
            // The body is the form as text (not JSON): FakeUpstream hands it over as it came.
            const form = new URLSearchParams(String(body));
            const bad = form.get("grant_type") === JWT_BEARER
              ? await checkAssertion(form.get("assertion") ?? "", options.accounts, fake.tokenUrl)
              : [`grant_type ${form.get("grant_type")}`];
            if (bad.length > 0) {
              fake.tokenViolations.push(...bad);
              return {
                kind: "json",
                status: 400,
                body: { error: "invalid_grant", error_description: "Invalid JWT Signature." },
              };
            }
            const token = `ya29.fake-access-token-${tokens}-${crypto.randomUUID()}`;
            issued.add(token);
            return {
              kind: "json",
              status: 200,
              body: { access_token: token, expires_in: fake.expiresIn, token_type: "Bearer" },
            };
          },
        };
      }
      const m = MODEL_PATH.exec(url.pathname);
      if (m === null) return undefined;
      const [, project, region, publisher, model, method] = m as unknown as string[];
      const where: string[] = [];
      if (project !== VERTEX_PROJECT) where.push(`project ${project}`);
      if (region !== VERTEX_REGION) where.push(`location ${region}`);
      const authorized = (headers: Headers) => {
        const auth = headers.get("authorization") ?? "";
        const token = auth.startsWith("Bearer ") ? auth.slice(7) : "";
        const bad = issued.has(token) ? [] : ["auth: no valid access token"];
        if (headers.has("x-goog-api-key") || headers.has("x-api-key")) {
          bad.push("an API key header was sent to Vertex AI");
        }
        return bad;
      };
      if (publisher === "google" && method === "predict") {
        return {
          check: (headers, body) => [
            ...where,
            ...authorized(headers),
            ...checkPredict(model!, body),
          ],
          answer: (body) => predictAnswer(model!, body),
        };
      }
      if (publisher === "google") {
        const stream = method === "streamGenerateContent";
        const counting = method === "countTokens";
        return {
          check(headers, body, url) {
            const bad = [...where, ...authorized(headers)];
            if (method !== "generateContent" && !counting && !stream) {
              bad.push(`method ${method}`);
            }
            if (stream && url.searchParams.get("alt") !== "sse") bad.push("stream: ?alt=sse");
            if (counting) bad.push(...checkCountTokens(model!, body));
            return bad;
          },
          answer: (body) => {
            // Vertex's CountTokensRequest as the Gemini API's: its `model` is the path's.
            const { model: _, ...asked } = body;
            return forward(
              gemini,
              `/v1beta/models/${model}:${method}${stream ? "?alt=sse" : ""}`,
              { "x-goog-api-key": gemini.apiKey },
              counting ? asked : body,
              true,
            );
          },
        };
      }
      const counting = model === "count-tokens";
      let beta: string | null = null;
      return {
        check(headers, body) {
          beta = headers.get("anthropic-beta");
          const bad = [...where, ...authorized(headers)];
          if (method !== "rawPredict" && (method !== "streamRawPredict" || counting)) {
            bad.push(`method ${method}`);
          }
          if (typeof body !== "object" || body === null) return [...bad, "body: not JSON"];
          const fields = body as Obj;
          if (counting) {
            if (typeof fields.model !== "string") bad.push("count-tokens: model in the body");
            return bad;
          }
          if ("model" in fields) bad.push("model: not in the body on Vertex (it is in the path)");
          if (fields.anthropic_version !== VERTEX_ANTHROPIC_VERSION) {
            bad.push(`anthropic_version: ${JSON.stringify(fields.anthropic_version)}`);
          }
          if ((method === "streamRawPredict") !== (fields.stream === true)) {
            bad.push(`stream: ${fields.stream} with ${method}`);
          }
          return bad;
        },
        answer(body) {
          const headers: Record<string, string> = {
            "x-api-key": anthropic.apiKey,
            "anthropic-version": "2023-06-01",
          };
          if (beta !== null) headers["anthropic-beta"] = beta;
          if (counting) {
            return forward(anthropic, "/v1/messages/count_tokens", headers, body, false);
          }
          const { anthropic_version: _, ...rest } = body;
          return forward(anthropic, "/v1/messages", headers, { model, ...rest }, false);
        },
      };
    },
    errorBody: (status, type, message) =>
      type.endsWith("_error") && status !== 401 && status !== 429
        ? { type: "error", error: { type, message } }
        : googleError(status, type, message),
    authError: () => ({
      status: 401,
      body: googleError(
        401,
        "UNAUTHENTICATED",
        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
      ),
    }),
    streamError: (_type, message) =>
      `data: ${JSON.stringify({ error: { code: 503, message, status: "UNAVAILABLE" } })}\r\n\r\n`,
  };
  const upstream = new FakeUpstream(style, options);
  const close = upstream.close.bind(upstream);
  const fake = Object.assign(upstream, {
    tokenUrl: `${upstream.url}/token`,
    gemini,
    anthropic,
    tokenViolations: [] as string[],
    revokeTokens: () => issued.clear(),
    expiresIn: options.expiresIn ?? 3599,
    subjectToken: "eyJ.fake-workload-token-1",
    async close() {
      await close();
      await gemini.close();
      await anthropic.close();
    },
  });
  Object.defineProperty(fake, "tokenRequests", { get: () => tokens });
  return fake as FakeVertex;
}

/** The fields of Vertex's CountTokensRequest (no `generateContentRequest`, the Gemini API's). */
const COUNT_TOKENS_FIELDS = new Set([
  "model",
  "instances",
  "contents",
  "systemInstruction",
  "tools",
  "generationConfig",
]);

/** What is wrong with a `:countTokens` body for Google's `model` (Vertex answers each with
 * 400 INVALID_ARGUMENT). */
function checkCountTokens(model: string, body: unknown): string[] {
  if (typeof body !== "object" || body === null) return ["countTokens: body not JSON"];
  const bad: string[] = [];
  for (const key of Object.keys(body)) {
    if (!COUNT_TOKENS_FIELDS.has(key)) {
      bad.push(`countTokens: Invalid JSON payload received. Unknown name "${key}"`);
    }
  }
  const named = (body as Obj).model;
  const resource =
    `projects/${VERTEX_PROJECT}/locations/${VERTEX_REGION}/publishers/google/models/${model}`;
  if (named !== undefined && named !== resource) {
    bad.push(`countTokens: model ${JSON.stringify(named)}, not the resource name ${resource}`);
  }
  return bad;
}

/** Google's text embedding models on Vertex: their vector length and their most instances
 * in one `:predict` call. */
export const VERTEX_EMBEDDING_MODELS: Record<string, { size: number; perCall: number }> = {
  "text-embedding-005": { size: 768, perCall: 250 },
  "text-multilingual-embedding-002": { size: 768, perCall: 250 },
  "gemini-embedding-001": { size: 3072, perCall: 1 },
};

/** The task types Vertex's text embedding models take. */
const TASK_TYPES = new Set([
  "RETRIEVAL_QUERY",
  "RETRIEVAL_DOCUMENT",
  "SEMANTIC_SIMILARITY",
  "CLASSIFICATION",
  "CLUSTERING",
  "QUESTION_ANSWERING",
  "FACT_VERIFICATION",
  "CODE_RETRIEVAL_QUERY",
]);

/** What is wrong with a text embedding `:predict` body (Vertex's documented request:
 * `instances[]` of `{content, task_type?, title?}`, `parameters` of `{outputDimensionality?,
 * autoTruncate?}`, at most 250 instances, one for `gemini-embedding-001`). */
function checkPredict(model: string, body: unknown): string[] {
  if (typeof body !== "object" || body === null) return ["predict: body not JSON"];
  const bad: string[] = [];
  const { instances, parameters, ...rest } = body as Obj;
  for (const key of Object.keys(rest)) bad.push(`predict: Unknown name "${key}"`);
  const limits = VERTEX_EMBEDDING_MODELS[model];
  if (!Array.isArray(instances) || instances.length === 0) return [...bad, "predict: instances"];
  if (limits && instances.length > limits.perCall) {
    bad.push(`predict: ${instances.length} instances, ${model} takes ${limits.perCall} a call`);
  }
  instances.forEach((instance, i) => {
    if (typeof instance !== "object" || instance === null) {
      bad.push(`predict: instances[${i}] not an object`);
      return;
    }
    const { content, task_type, title, ...more } = instance as Obj;
    for (const key of Object.keys(more)) bad.push(`predict: instances[${i}].${key}`);
    if (typeof content !== "string" || content === "") {
      bad.push(`predict: instances[${i}].content a non-empty string`);
    }
    if (task_type !== undefined && !TASK_TYPES.has(task_type as string)) {
      bad.push(`predict: instances[${i}].task_type ${JSON.stringify(task_type)}`);
    }
    if (title !== undefined && typeof title !== "string") bad.push(`predict: title`);
  });
  if (parameters !== undefined) {
    if (typeof parameters !== "object" || parameters === null) return [...bad, "parameters"];
    const { outputDimensionality: d, autoTruncate, ...more } = parameters as Obj;
    for (const key of Object.keys(more)) bad.push(`predict: parameters.${key}`);
    if (d !== undefined && (!Number.isInteger(d) || (d as number) < 1)) {
      bad.push("predict: parameters.outputDimensionality a positive integer");
    }
    if (autoTruncate !== undefined && typeof autoTruncate !== "boolean") {
      bad.push("predict: parameters.autoTruncate a boolean");
    }
  }
  return bad;
}

/** Vertex's answer to a text embedding `:predict`: a prediction per instance, its vector
 * (deterministic in its text and task type) and statistics; 404 for a model it has not. */
function predictAnswer(model: string, body: Obj): Answer {
  const limits = VERTEX_EMBEDDING_MODELS[model];
  if (!limits) {
    return {
      kind: "json",
      status: 404,
      body: googleError(
        404,
        "NOT_FOUND",
        `Publisher Model \`projects/${VERTEX_PROJECT}/locations/${VERTEX_REGION}/publishers/google/models/${model}\` was not found or your project does not have access to it.`,
      ),
    };
  }
  const d = (body.parameters as Obj | undefined)?.outputDimensionality as number | undefined;
  if (d !== undefined && d > limits.size) {
    return {
      kind: "json",
      status: 400,
      body: googleError(
        400,
        "INVALID_ARGUMENT",
        `outputDimensionality must be at most ${limits.size}.`,
      ),
    };
  }
  let characters = 0;
  const predictions = (body.instances as Obj[]).map((instance) => {
    const content = instance.content as string;
    characters += content.replace(/\s/g, "").length;
    const text = instance.task_type === undefined ? content : `${instance.task_type}:${content}`;
    return {
      embeddings: {
        statistics: { truncated: false, token_count: content.split(/\s+/).length },
        values: fakeVector(text, d ?? limits.size),
      },
    };
  });
  return {
    kind: "json",
    status: 200,
    body: { predictions, metadata: { billableCharacterCount: characters } },
  };
}

/** A Gemini answer or chunk as Vertex writes it: with its `createTime`. */
function vertexChunk(data: Obj): Obj {
  return { ...data, createTime: "2026-01-15T12:00:00.123456Z" };
}

function withCreateTime(event: string): string {
  const json = event.replace(/^data: /, "").replace(/\r\n\r\n$/, "");
  return `data: ${JSON.stringify(vertexChunk(JSON.parse(json)))}\r\n\r\n`;
}

/** What is wrong with an AWS workload's subject token (empty when right): the URL-encoded JSON
 * of STS's GetCallerIdentity request in us-east-1 for `audience`, signed with the fake AWS keys
 * (a session token of IMDS's own when it has one). */
async function checkAwsIdentity(token: string, audience: string): Promise<string[]> {
  let request: { url?: string; method?: string; headers?: { key: string; value: string }[] };
  try {
    request = JSON.parse(decodeURIComponent(token));
  } catch {
    return ["sts: the AWS subject token is not URL-encoded JSON"];
  }
  const want = "https://sts.us-east-1.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15";
  const bad: string[] = [];
  if (request.url !== want) bad.push(`sts: AWS url ${request.url}`);
  if (request.method !== "POST") bad.push(`sts: AWS method ${request.method}`);
  const headers = new Headers(
    (request.headers ?? []).map((h): [string, string] => [h.key, h.value]),
  );
  if (headers.get("x-goog-cloud-target-resource") !== audience) {
    bad.push("sts: x-goog-cloud-target-resource is not the audience");
  }
  if (headers.get("host") !== "sts.us-east-1.amazonaws.com") bad.push("sts: AWS host");
  const authorization = headers.get("authorization") ?? "";
  const signed = /SignedHeaders=([a-z0-9;-]+)/.exec(authorization)?.[1]?.split(";") ?? [];
  const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(
    headers.get("x-amz-date") ?? "",
  );
  if (date === null) return [...bad, "sts: no x-amz-date"];
  const session = headers.get("x-amz-security-token");
  const credentials = session === null
    ? FAKE_AWS_CREDENTIALS
    : { ...FAKE_AWS_CREDENTIALS, sessionToken: session };
  const expected = await awsSignature(
    { method: "POST", url: want, headers, body: "" },
    signed,
    credentials,
    "us-east-1",
    new Date(Date.UTC(+date[1]!, +date[2]! - 1, +date[3]!, +date[4]!, +date[5]!, +date[6]!)),
    "sts",
  );
  if (expected !== authorization) bad.push("sts: the AWS signature does not verify");
  return bad;
}
