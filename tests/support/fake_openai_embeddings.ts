/**
 * The fake OpenAI upstream's `POST /v1/embeddings`: the request checked against OpenAI's
 * documented format (CreateEmbeddingRequest: only `model`, `input`, `encoding_format`,
 * `dimensions`, `user`; `input` a non-empty string, strings, token ids or arrays of token ids,
 * at most 2048), answered as OpenAI answers (CreateEmbeddingResponse): floats, or little-endian
 * float32 in base64 when asked for, with the upstream's own model name and usage.
 *
 * Models: `text-embedding-3-small` (1536) and `text-embedding-3-large` (3072) take
 * `dimensions`; `text-embedding-ada-002` (1536) answers a request with `dimensions` with
 * OpenAI's 400. Any other model is OpenAI's 404 `model_not_found`. A vector is a deterministic
 * function of its input's text (not meaningful: the gateway must only carry it).
 */
import { checkOpenAIHeaders, isObj } from "./fake_openai.ts";
import { modelNotFound } from "./fake_openai_moderation.ts";
import type { Answer, FakeRoute } from "./fake_upstream.ts";

const FIELDS = new Set(["model", "input", "encoding_format", "dimensions", "user"]);

const MODELS: Record<string, { size: number; dimensions: boolean }> = {
  "text-embedding-3-small": { size: 1536, dimensions: true },
  "text-embedding-3-large": { size: 3072, dimensions: true },
  "text-embedding-ada-002": { size: 1536, dimensions: false },
};

const isTokenIds = (v: unknown): v is number[] =>
  Array.isArray(v) && v.length > 0 && v.every((id) => Number.isInteger(id) && id >= 0);

/** Checks an embeddings request; returns what is wrong with it. */
export function checkEmbeddingRequest(headers: Headers, body: unknown, apiKey: string): string[] {
  const bad = checkOpenAIHeaders(headers, apiKey);
  if (!isObj(body)) return [...bad, "body is not a JSON object"];
  for (const key of Object.keys(body)) {
    if (!FIELDS.has(key)) bad.push(`Unrecognized request argument supplied: ${key}`);
  }
  if (typeof body.model !== "string" || body.model === "") bad.push("model: a string");
  const input = body.input;
  const ok = (typeof input === "string" && input !== "") || isTokenIds(input) ||
    (Array.isArray(input) && input.length > 0 && input.length <= 2048 &&
      (input.every((s) => typeof s === "string" && s !== "") || input.every(isTokenIds)));
  if (!ok) bad.push("input: a non-empty string, strings, token ids or arrays of token ids");
  if (
    body.encoding_format !== undefined &&
    !["float", "base64"].includes(body.encoding_format as string)
  ) {
    bad.push("encoding_format: 'float' or 'base64'");
  }
  const d = body.dimensions;
  if (d !== undefined && (!Number.isInteger(d) || (d as number) < 1)) {
    bad.push("dimensions: an integer of at least 1");
  }
  if (body.user !== undefined && typeof body.user !== "string") bad.push("user: a string");
  return bad;
}

/** The fake's vector for one input (a string or token ids), `size` long, normalised. */
export function fakeVector(input: string | number[], size: number): number[] {
  const text = typeof input === "string" ? input : input.join(",");
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  const v = Array.from({ length: size }, (_, i) => Math.fround(Math.sin(h + i * 0.37)));
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => Math.fround(x / norm));
}

/** A vector as OpenAI's base64: little-endian float32. */
export function fakeBase64(vector: number[]): string {
  const view = new DataView(new ArrayBuffer(vector.length * 4));
  vector.forEach((x, i) => view.setFloat32(i * 4, x, true));
  return new Uint8Array(view.buffer).toBase64();
}

/** The `/v1/embeddings` route of the fake OpenAI upstream. */
export function embeddingsRoute(
  apiKey: string,
  errorBody: (status: number, type: string, message: string, code?: string) => unknown,
): FakeRoute {
  return {
    check: (headers, body) => checkEmbeddingRequest(headers, body, apiKey),
    answer(body): Answer {
      const name = body.model as string;
      const model = MODELS[name];
      if (!model) return modelNotFound(name, errorBody);
      if (body.dimensions !== undefined && !model.dimensions) {
        return {
          kind: "json",
          status: 400,
          body: errorBody(
            400,
            "invalid_request_error",
            "This model does not support specifying dimensions.",
          ),
        };
      }
      const raw = body.input;
      const inputs: (string | number[])[] = typeof raw === "string" || isTokenIds(raw)
        ? [raw]
        : raw as (string | number[])[];
      const size = (body.dimensions as number | undefined) ?? model.size;
      let tokens = 0;
      const data = inputs.map((input, index) => {
        tokens += typeof input === "string" ? input.split(/\s+/).length : input.length;
        const vector = fakeVector(input, size);
        return {
          object: "embedding",
          index,
          embedding: body.encoding_format === "base64" ? fakeBase64(vector) : vector,
        };
      });
      return {
        kind: "json",
        status: 200,
        body: {
          object: "list",
          data,
          model: name,
          usage: { prompt_tokens: tokens, total_tokens: tokens },
        },
      };
    },
  };
}
