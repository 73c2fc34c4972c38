/**
 * The upstreams' model lists (model discovery, `discover: true`): OpenAI-compatible
 * `GET /models`, Anthropic's paginated `GET /v1/models`, Gemini's paginated
 * `GET /v1beta/models`, each read into the chat models it names.
 */
import type { ListedModel } from "./types.ts";
import type { UpstreamRequest } from "./upstream/request.ts";
import type { Upstream } from "./upstream/upstream.ts";
import { isObject, type JsonObject, malformed } from "./wire.ts";

/**
 * Pieces of an id that mark a model as not a chat model, whatever the list says of it:
 * embeddings, speech, transcription, images, moderation, realtime audio, rerankers and the
 * legacy completions-only models.
 */
const NOT_CHAT = [
  "embed",
  "tts",
  "whisper",
  "transcribe",
  "dall-e",
  "image",
  "moderation",
  "realtime",
  "rerank",
  "babbage",
  "davinci",
];

/** Whether an id is not obviously that of a model which cannot chat (see `NOT_CHAT`). */
export function looksLikeChat(id: string): boolean {
  const lower = id.toLowerCase();
  return !NOT_CHAT.some((piece) => lower.includes(piece));
}

/** Pages of one listing read at most (an upstream that always says there is more). */
const MAX_PAGES = 100;
/** Models asked for per page (the most Anthropic and Gemini give). */
const PAGE_SIZE = 1000;

/** The `GET` of one page of a listing. */
function listing(path: string, signal: AbortSignal): UpstreamRequest {
  return { method: "GET", path, signal, requestId: "discovery" };
}

/** A positive safe integer, or `null`. */
function count(value: unknown): number | null {
  return Number.isSafeInteger(value) && (value as number) > 0 ? value as number : null;
}

/** The string array at `obj[key]`, or `null` when it is not one. */
function strings(obj: unknown, key: string): string[] | null {
  const value = isObject(obj) ? obj[key] : undefined;
  return Array.isArray(value) && value.every((v) => typeof v === "string") ? value : null;
}

/** The objects with a non-empty string `id` (or `name`) in a page's array `key`. */
function items(page: unknown, key: string, idKey: "id" | "name"): JsonObject[] {
  if (!isObject(page) || !Array.isArray(page[key])) malformedList(key);
  return (page[key] as unknown[]).filter((item): item is JsonObject =>
    isObject(item) && typeof item[idKey] === "string" && item[idKey] !== ""
  );
}

function malformedList(key: string): never {
  throw malformed(`model list (no "${key}" array)`);
}

/**
 * An OpenAI-compatible list (`{"object":"list","data":[{id, created, owned_by}]}`), with what
 * some hosts add: `context_length` (OpenRouter), `context_window` (Groq), `max_model_len`
 * (vLLM); OpenRouter's `architecture.input_modalities` / `output_modalities` and
 * `supported_parameters` (`tools`). A model whose stated output has no text is not a chat model.
 */
export function readOpenAIModels(page: unknown): ListedModel[] {
  const listed: ListedModel[] = [];
  for (const item of items(page, "data", "id")) {
    const id = item.id as string;
    const inputs = strings(item.architecture, "input_modalities");
    const outputs = strings(item.architecture, "output_modalities");
    const parameters = strings(item, "supported_parameters");
    if (!looksLikeChat(id) || (outputs !== null && !outputs.includes("text"))) continue;
    listed.push({
      id,
      created: count(item.created),
      contextLength: count(item.context_length) ?? count(item.context_window) ??
        count(item.max_model_len),
      imageInput: inputs === null ? null : inputs.includes("image"),
      functionCalling: parameters === null ? null : parameters.includes("tools"),
    });
  }
  return listed;
}

/** `GET {base_url}/models`: one page. */
export async function listOpenAIModels(
  upstream: Upstream,
  signal: AbortSignal,
): Promise<ListedModel[]> {
  return readOpenAIModels(await upstream.json(listing("/models", signal)));
}

/**
 * One page of Anthropic's list (`{data:[{type:"model", id, display_name, created_at}],
 * has_more, first_id, last_id}`), with what newer API versions add: `max_input_tokens` and
 * `capabilities.image_input.supported`. Every Claude model chats.
 */
export function readAnthropicModels(page: unknown): ListedModel[] {
  return items(page, "data", "id").map((item) => {
    const created = typeof item.created_at === "string" ? Date.parse(item.created_at) : NaN;
    const image = isObject(item.capabilities) && isObject(item.capabilities.image_input)
      ? item.capabilities.image_input.supported
      : undefined;
    return {
      id: item.id as string,
      // An epoch `created_at` means the date is unknown.
      created: created > 0 ? Math.floor(created / 1000) : null,
      contextLength: count(item.max_input_tokens),
      imageInput: typeof image === "boolean" ? image : null,
      functionCalling: null,
    };
  }).filter((model) => looksLikeChat(model.id));
}

/** `GET /v1/models?limit=1000`, then `&after_id={last_id}` while `has_more`. */
export function listAnthropicModels(
  upstream: Upstream,
  signal: AbortSignal,
): Promise<ListedModel[]> {
  return everyPage(upstream, signal, {
    path: (after) =>
      `/v1/models?limit=${PAGE_SIZE}` +
      (after === null ? "" : `&after_id=${encodeURIComponent(after)}`),
    read: readAnthropicModels,
    next: (page) =>
      page.has_more === true && typeof page.last_id === "string" ? page.last_id : null,
  });
}

/**
 * One page of Gemini's list (`{models:[{name:"models/...", inputTokenLimit, outputTokenLimit,
 * supportedGenerationMethods, thinking}], nextPageToken}`): the models that support
 * `generateContent`, `models/` taken off their names.
 */
export function readGeminiModels(page: unknown): ListedModel[] {
  const listed: ListedModel[] = [];
  for (const item of items(page, "models", "name")) {
    const id = (item.name as string).replace(/^models\//, "");
    const methods = strings(item, "supportedGenerationMethods") ?? [];
    if (id === "" || !methods.includes("generateContent") || !looksLikeChat(id)) continue;
    listed.push({
      id,
      created: null,
      contextLength: count(item.inputTokenLimit),
      imageInput: null,
      functionCalling: null,
    });
  }
  return listed;
}

/** `GET /v1beta/models?pageSize=1000`, then `&pageToken={nextPageToken}` while one is given. */
export function listGeminiModels(
  upstream: Upstream,
  signal: AbortSignal,
): Promise<ListedModel[]> {
  return everyPage(upstream, signal, {
    path: (token) =>
      `/v1beta/models?pageSize=${PAGE_SIZE}` +
      (token === null ? "" : `&pageToken=${encodeURIComponent(token)}`),
    read: readGeminiModels,
    next: (page) =>
      typeof page.nextPageToken === "string" && page.nextPageToken !== ""
        ? page.nextPageToken
        : null,
  });
}

/** How a paginated list is read. */
export interface Pages {
  /** The path of the page at `cursor` (`null`: the first). */
  path(cursor: string | null): string;
  /** The models of a page (a page that is not an object is malformed). */
  read(page: unknown): ListedModel[];
  /** The cursor of the page after this one, or `null` when it is the last. */
  next(page: JsonObject): string | null;
}

/** The models of every page of a list, `MAX_PAGES` at most. */
export async function everyPage(
  upstream: Upstream,
  signal: AbortSignal,
  pages: Pages,
): Promise<ListedModel[]> {
  const listed: ListedModel[] = [];
  let cursor: string | null = null;
  for (let n = 0; n < MAX_PAGES; n++) {
    const page = await upstream.json(listing(pages.path(cursor), signal));
    listed.push(...pages.read(page));
    cursor = pages.next(page as JsonObject);
    if (cursor === null) break;
  }
  return listed;
}
