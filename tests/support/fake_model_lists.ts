/**
 * The model-list endpoints of the fakes, in each upstream's documented format: OpenAI's
 * `GET /v1/models` (`{"object":"list","data":[…]}`, one page), Anthropic's `GET /v1/models`
 * (`limit` 1–1000, default 20, `after_id`/`before_id`; `{data, has_more, first_id, last_id}`)
 * and Gemini's `GET /v1beta/models` (`pageSize` default 50, coerced to 1000 at most,
 * `pageToken`; `{models, nextPageToken}`). Each serves the fake's `listing`, at most
 * `listPageMax` items a page (an upstream may give fewer than asked for).
 */
import type { FakeRoute, FakeUpstream } from "./fake_upstream.ts";

type Obj = Record<string, unknown>;

/** What OpenAI lists: chat models beside embeddings, speech, images and moderation. */
export const OPENAI_LISTING: readonly Obj[] = [
  { id: "gpt-4o-mini", object: "model", created: 1721172741, owned_by: "system" },
  { id: "gpt-up", object: "model", created: 1767225600, owned_by: "system" },
  { id: "text-embedding-3-small", object: "model", created: 1705948997, owned_by: "system" },
  { id: "whisper-1", object: "model", created: 1677532384, owned_by: "openai-internal" },
  { id: "tts-1-hd", object: "model", created: 1699046015, owned_by: "system" },
  { id: "dall-e-3", object: "model", created: 1698785189, owned_by: "system" },
  { id: "omni-moderation-latest", object: "model", created: 1731689265, owned_by: "system" },
  { id: "gpt-4o-transcribe", object: "model", created: 1742068463, owned_by: "system" },
  { id: "gpt-image-1", object: "model", created: 1745517030, owned_by: "system" },
];

/** What Anthropic lists (the current ModelInfo: limits and capabilities). */
export const ANTHROPIC_LISTING: readonly Obj[] = [
  anthropicModel("claude-up", "Claude Up", "2026-01-01T00:00:00Z", true),
  anthropicModel("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5", "2025-09-29T00:00:00Z", true),
  anthropicModel("claude-3-haiku-20240307", "Claude Haiku 3", "2024-03-07T00:00:00Z", false),
];

/** What Gemini lists: chat models beside embeddings, Imagen and speech. */
export const GEMINI_LISTING: readonly Obj[] = [
  geminiModel("gemini-up", ["generateContent", "countTokens", "createCachedContent"], true),
  geminiModel("gemini-2.5-flash", [
    "generateContent",
    "countTokens",
    "createCachedContent",
    "batchGenerateContent",
  ], true),
  geminiModel("gemini-embedding-001", ["embedContent", "countTextTokens", "countTokens"], false),
  geminiModel("imagen-4.0-generate-001", ["predict"], false),
  geminiModel("gemini-2.5-flash-preview-tts", ["countTokens", "generateContent"], false),
];

/** An Anthropic `ModelInfo` as the API writes it. */
export function anthropicModel(id: string, name: string, created: string, images: boolean): Obj {
  const supported = (yes: boolean) => ({ supported: yes });
  return {
    type: "model",
    id,
    display_name: name,
    created_at: created,
    max_input_tokens: 200000,
    max_tokens: 64000,
    capabilities: {
      batch: supported(true),
      citations: supported(true),
      code_execution: supported(false),
      context_management: { supported: false },
      effort: { supported: false },
      image_input: supported(images),
      pdf_input: supported(images),
      structured_outputs: supported(true),
      thinking: {
        supported: true,
        types: { adaptive: supported(false), enabled: supported(true) },
      },
    },
  };
}

/** A Gemini `Model` as the API writes it. */
export function geminiModel(id: string, methods: string[], thinking: boolean): Obj {
  return {
    name: `models/${id}`,
    version: "001",
    displayName: id,
    description: `The fake's ${id}.`,
    inputTokenLimit: 1048576,
    outputTokenLimit: 65536,
    supportedGenerationMethods: methods,
    temperature: 1,
    topP: 0.95,
    topK: 64,
    maxTemperature: 2,
    thinking,
  };
}

/** A GET's own violations: a body, or query parameters the endpoint does not take. */
function checkGet(body: unknown, url: URL, params: readonly string[]): string[] {
  const bad = body === "" ? [] : ["a GET with a body"];
  for (const name of url.searchParams.keys()) {
    if (!params.includes(name)) bad.push(`unknown query parameter ${name}`);
  }
  return bad;
}

/** An integer query parameter within bounds, `fallback` when absent, `null` when bad. */
function intParam(url: URL, name: string, fallback: number, max: number): number | null {
  const raw = url.searchParams.get(name);
  if (raw === null) return fallback;
  const n = Number(raw);
  return /^[0-9]+$/.test(raw) && n >= 1 && n <= max ? n : null;
}

function json(body: unknown) {
  return { kind: "json" as const, status: 200, body };
}

/** OpenAI's `GET /v1/models` (Bearer key). */
export function openAIListRoute(apiKey: string, fake: () => FakeUpstream): FakeRoute {
  return {
    method: "GET",
    check: (headers, body, url) => {
      const bad = checkGet(body, url, []);
      if (headers.get("authorization") !== `Bearer ${apiKey}`) bad.push("auth: authorization");
      return bad;
    },
    answer: () => json({ object: "list", data: fake().listing }),
  };
}

/** Anthropic's `GET /v1/models` (`x-api-key`, `anthropic-version`). */
export function anthropicListRoute(
  apiKey: string,
  versions: readonly string[],
  fake: () => FakeUpstream,
): FakeRoute {
  return {
    method: "GET",
    check: (headers, body, url) => {
      const bad = checkGet(body, url, ["limit", "after_id", "before_id"]);
      if (headers.get("x-api-key") !== apiKey) bad.push("auth: x-api-key is wrong or missing");
      if (!versions.includes(headers.get("anthropic-version") ?? "")) {
        bad.push(`anthropic-version: ${JSON.stringify(headers.get("anthropic-version"))}`);
      }
      if (intParam(url, "limit", 20, 1000) === null) bad.push("limit: an integer 1–1000");
      return bad;
    },
    answer: (_body, url) => {
      const { listing, listPageMax } = fake();
      const after = url.searchParams.get("after_id");
      const start = after === null ? 0 : listing.findIndex((m) => m.id === after) + 1;
      const size = Math.min(intParam(url, "limit", 20, 1000)!, listPageMax);
      const data = listing.slice(start, start + size);
      return json({
        data,
        has_more: start + size < listing.length,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
      });
    },
  };
}

/** Gemini's `GET /v1beta/models` (`x-goog-api-key`); page tokens are opaque. */
export function geminiListRoute(apiKey: string, fake: () => FakeUpstream): FakeRoute {
  const token = (offset: number) => btoa(`offset:${offset}`);
  const offsetOf = (t: string) => /^offset:(\d+)$/.exec(atob(t))?.[1];
  return {
    method: "GET",
    check: (headers, body, url) => {
      const bad = checkGet(body, url, ["pageSize", "pageToken"]);
      if (headers.get("x-goog-api-key") !== apiKey) bad.push("auth: x-goog-api-key");
      if (intParam(url, "pageSize", 50, Number.MAX_SAFE_INTEGER) === null) {
        bad.push("pageSize: a positive integer");
      }
      const t = url.searchParams.get("pageToken");
      if (t !== null && (!/^[A-Za-z0-9+/=]+$/.test(t) || offsetOf(t) === undefined)) {
        bad.push("pageToken: not a token this server gave");
      }
      return bad;
    },
    answer: (_body, url) => {
      const { listing, listPageMax } = fake();
      const t = url.searchParams.get("pageToken");
      const start = t === null ? 0 : Number(offsetOf(t));
      const size = Math.min(intParam(url, "pageSize", 50, Infinity)!, 1000, listPageMax);
      const page: Obj = { models: listing.slice(start, start + size) };
      if (start + size < listing.length) page.nextPageToken = token(start + size);
      return json(page);
    },
  };
}
