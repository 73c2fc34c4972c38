/**
 * The `vertex` style: models on Google Cloud's Vertex AI, called with a service account's
 * access tokens (access_tokens.ts), the workload's attached account's (the metadata server) or a
 * federated workload's (external_account.ts). Google's Gemini models speak the Gemini API's wire format
 * (`:generateContent`, `:streamGenerateContent?alt=sse`) and Anthropic's Claude models the
 * Messages API's (`:rawPredict`, `:streamRawPredict`, the body without `model` and with
 * `anthropic_version: "vertex-2023-10-16"`): each goes through that style's adapter, its
 * translators unchanged, at Vertex's paths (model_path.ts). Google's text embedding models
 * are called at `:predict` (embeddings.ts).
 *
 * Calls of a door pass through as written when the provider's `publisher` is set (every model
 * then speaks that publisher's protocol); otherwise each model's publisher is read from its
 * name, and calls go through the canonical model.
 */
import type { CanonicalRequest } from "../../canonical/conversation.ts";
import type { CanonicalEvent } from "../../canonical/events.ts";
import type { CanonicalResult } from "../../canonical/result.ts";
import type { VertexConfig } from "../../config/types.ts";
import { AnthropicProvider, parseAnthropicError } from "../anthropic/provider.ts";
import type { MessagesPlace } from "../anthropic/place.ts";
import { GeminiProvider, mapGeminiError, parseGeminiError } from "../gemini/provider.ts";
import type {
  CallContext,
  PassProtocol,
  PassthroughAnswer,
  PassthroughCall,
  Provider,
  ProviderDeps,
} from "../types.ts";
import type { UpstreamErrorDetail } from "../upstream/error_detail.ts";
import { credentialsRefused } from "../upstream/error_mapping.ts";
import type { RetryTiming } from "../upstream/retry.ts";
import { Upstream, type UpstreamStyle } from "../upstream/upstream.ts";
import { isObject } from "../wire.ts";
import { type ApiError, invalidRequest, unsupportedCapability } from "../../errors.ts";
import type { EmbeddingRequest, EmbeddingResult } from "../../types/openai.ts";
import { AccessTokens } from "./access_tokens.ts";
import { exchangeDeps, OAuthTokens } from "../upstream/oauth_tokens.ts";
import { toVertexCountTokens } from "./count_tokens.ts";
import { vertexEmbed } from "./embeddings.ts";
import { vertexModel, vertexModelPath } from "./model_path.ts";
import { externalAccountTokens } from "./external_account.ts";
import { readGoogleCredentials } from "./service_account.ts";

/** The Messages API version Vertex AI's Claude models take, in the body. */
export const VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16";

/** What an operator checks when Vertex refuses the gateway's token (401 after a renewal, 403). */
const SERVICE_ACCOUNT =
  "its service account (credentials_env): that its key is valid and that it has the Vertex AI User role on the project";
/** The same, for the service account attached to the workload (`metadata_server`). */
const ATTACHED_ACCOUNT =
  "the service account attached to the workload (metadata_server): that it has the Vertex AI User role on the project";

/** The same, for a workload identity federation configuration. */
const FEDERATED_ACCOUNT =
  "its workload identity federation (credentials_env): that the pool's principal, or the service account it impersonates, has the Vertex AI User role on the project";

/** The header the metadata server requires of every request (and the proof it comes from
 * inside the workload, not through a redirect). */
const METADATA_HEADERS = { "metadata-flavor": "Google" };

/** Where the metadata server gives the attached service account's access token: Google's
 * address, or `GCE_METADATA_HOST` (host and port) as Google's client libraries read it. */
function metadataTokenUrl(env: (name: string) => string | undefined): string {
  const host = env("GCE_METADATA_HOST") || "metadata.google.internal";
  return `http://${host}/computeMetadata/v1/instance/service-accounts/default/token`;
}

/** A provider's tokens, and what an operator checks when Vertex refuses them: the attached
 * account's from the metadata server, else those of the credentials in `credentials_env`. */
function vertexCredentials(
  deps: ProviderDeps,
  vertex: VertexConfig,
  exchange: ReturnType<typeof exchangeDeps>,
): { credentials: OAuthTokens; check: string } {
  if (vertex.metadata_server) {
    const credentials = new OAuthTokens({
      ...exchange,
      tokenUrl: metadataTokenUrl(deps.env ?? (() => undefined)),
      request: () => Promise.resolve({ headers: METADATA_HEADERS }),
      credentials: { what: "the workload's service account", check: "metadata_server" },
    });
    return { credentials, check: ATTACHED_ACCOUNT };
  }
  const read = readGoogleCredentials(deps.config.id, vertex.credentials_env!, deps.apiKey ?? "");
  if (read.kind === "external_account") {
    return {
      credentials: externalAccountTokens({
        ...exchange,
        account: read.account,
        env: deps.env ?? (() => undefined),
      }),
      check: FEDERATED_ACCOUNT,
    };
  }
  const credentials = new AccessTokens({
    ...exchange,
    account: read.account,
    tokenUrl: vertex.token_url,
  });
  return { credentials, check: SERVICE_ACCOUNT };
}

/** Reads a Vertex AI error body: Anthropic's shape from a Claude model, Google's otherwise. */
export function parseVertexError(body: unknown): UpstreamErrorDetail {
  return isObject(body) && body.type === "error"
    ? parseAnthropicError(body)
    : parseGeminiError(body);
}

/** Where a Claude model on Vertex serves a Messages body (`model` the upstream's name). */
function claudePlace(vertex: VertexConfig): MessagesPlace {
  return (endpoint, body) => {
    if (endpoint === "count_tokens") {
      return { path: vertexModelPath(vertex, "anthropic", "count-tokens", "rawPredict"), body };
    }
    const { model, ...rest } = body;
    const method = rest.stream === true ? "streamRawPredict" : "rawPredict";
    return {
      path: vertexModelPath(vertex, "anthropic", String(model), method),
      body: { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest },
    };
  };
}

/** The adapter for a `vertex` provider; throws ConfigError for a credential it cannot read. */
export function vertexProvider(deps: ProviderDeps, timing: RetryTiming = {}): Provider {
  return new VertexProvider(deps, timing);
}

class VertexProvider implements Provider {
  readonly id: string;
  readonly passes: ReadonlySet<PassProtocol>;
  readonly #vertex: VertexConfig;
  readonly #gemini: GeminiProvider;
  readonly #claude: AnthropicProvider;
  /** Calls of Google's embedding models (the same token as the chat calls'). */
  readonly #embeddings: Upstream;

  constructor(deps: ProviderDeps, timing: RetryTiming) {
    const { id, vertex } = deps.config;
    if (vertex === undefined) throw new Error(`provider ${id} is not a vertex provider`);
    this.id = id;
    this.#vertex = vertex;
    const { credentials, check } = vertexCredentials(deps, vertex, exchangeDeps(deps, timing));
    const style: UpstreamStyle = {
      headers: {},
      parseError: parseVertexError,
      mapError: (status, detail) =>
        status === 401 || status === 403
          ? credentialsRefused(id, status, check)
          : mapGeminiError(id, status, detail),
      credentials,
    };
    // The account's JSON is no key a message could quote; the token is never in a body.
    const inner = { ...deps, apiKey: null };
    this.#gemini = new GeminiProvider(inner, timing, {
      style,
      path: (model, method) => vertexModelPath(vertex, "google", model, method),
    });
    this.#claude = new AnthropicProvider(inner, timing, { style, place: claudePlace(vertex) });
    this.#embeddings = new Upstream(inner, style, timing);
    this.passes = vertex.publisher === "google"
      ? this.#gemini.passes
      : vertex.publisher === "anthropic"
      ? this.#claude.passes
      : new Set();
  }

  chat(req: CanonicalRequest, ctx: CallContext): Promise<CanonicalResult> {
    const [provider, call] = this.#route(ctx);
    const refused = provider === this.#claude ? documentUrlRefusal(req) : null;
    return refused ? Promise.reject(refused) : provider.chat(req, call);
  }

  chatStream(req: CanonicalRequest, ctx: CallContext): AsyncIterable<CanonicalEvent[]> {
    const [provider, call] = this.#route(ctx);
    const refused = provider === this.#claude ? documentUrlRefusal(req) : null;
    if (refused) {
      return { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(refused) }) };
    }
    return provider.chatStream(req, call);
  }

  passthrough(call: PassthroughCall, ctx: CallContext): Promise<PassthroughAnswer> {
    const [provider, routed] = this.#route(ctx);
    if (!provider.passes.has(call.protocol)) {
      return Promise.reject(
        new Error(
          `provider ${this.id} does not pass ${call.protocol} through to ${ctx.upstreamModel}`,
        ),
      );
    }
    const passed = call.endpoint === "countTokens" && provider === this.#gemini
      ? { ...call, body: toVertexCountTokens(call.body, this.#vertex, routed.upstreamModel) }
      : call;
    return provider.passthrough(passed, routed);
  }

  /** Google's text embedding models' `:predict`; see embeddings.ts. */
  embed(req: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResult> {
    const { publisher, name } = vertexModel(ctx.upstreamModel, this.#vertex);
    if (publisher !== "google") {
      return Promise.reject(
        unsupportedCapability(
          `The model \`${ctx.model.id}\` is Anthropic's on Vertex AI, which has no embeddings.`,
          "model",
        ),
      );
    }
    const call = name === ctx.upstreamModel ? ctx : { ...ctx, upstreamModel: name };
    const path = vertexModelPath(this.#vertex, "google", name, "predict");
    return vertexEmbed(this.#embeddings, path, req, call);
  }

  /** The adapter of the call's model's publisher, and the call with the model's name there. */
  #route(ctx: CallContext): [GeminiProvider | AnthropicProvider, CallContext] {
    const { publisher, name } = vertexModel(ctx.upstreamModel, this.#vertex);
    const call = name === ctx.upstreamModel ? ctx : { ...ctx, upstreamModel: name };
    return [publisher === "anthropic" ? this.#claude : this.#gemini, call];
  }
}

/** The 400 of the first document given by URL, which Vertex AI's Claude models refuse (they
 * take documents inline only); `null` when there is none. */
function documentUrlRefusal(req: CanonicalRequest): ApiError | null {
  for (const [i, message] of req.messages.entries()) {
    for (const [j, part] of message.parts.entries()) {
      const inner = part.type === "tool_result" ? part.content : [part];
      for (const [k, p] of inner.entries()) {
        if (p.type !== "document" || p.source.kind !== "url") continue;
        const at = part.type === "tool_result" ? `.content[${k}]` : "";
        const field = `messages[${i}].content[${j}]${at}.file.file_url`;
        return invalidRequest(
          `${field} must be a base64 PDF or a text document: Claude on Vertex AI takes documents inline, not by URL.`,
          field,
        );
      }
    }
  }
  return null;
}
