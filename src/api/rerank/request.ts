/**
 * The body of `POST /v1/rerank`, in the shape Cohere v2, Jina, vLLM and TEI's clients share:
 * `model`, `query`, `documents` (strings, or objects with a `text`), `top_n`,
 * `return_documents`. Checked against the model's `rerank` settings in the one validation
 * style, so that errors name the parameter like every other endpoint's.
 */
import type { RerankConfig } from "../../config/types.ts";
import type { RerankRequest } from "../../types/rerank.ts";
import { type Reader, readRequest } from "../../validation/reader.ts";
import { count } from "../../validation/wording.ts";

/** Characters a token of text counts as, for `max_document_tokens` (as for embeddings: the
 * gateway cannot know every model's tokenizer; the upstream stays the judge of its count). */
const CHARS_PER_TOKEN = 4;

const MODEL = { nonEmpty: true } as const;
const QUERY = { nonEmpty: true } as const;
const DOCUMENTS = { minItems: 1 } as const;
const DOCUMENT = {
  nonEmpty: true,
  expected: "a string or an object with a text field",
} as const;
const TEXT = { nonEmpty: true } as const;
const OPTIONAL_FLAG = { optional: true } as const;

/** The requested model id (required). */
export function rerankModelId(body: Record<string, unknown>): string {
  return readRequest(body).string("model", MODEL);
}

/** Checks one text (the query, a document) against the model's bound. */
function checked(at: Reader, text: string, settings: RerankConfig): string {
  if (Math.ceil(text.length / CHARS_PER_TOKEN) > settings.max_document_tokens) {
    throw at.invalid(
      `expected a text of at most ${
        count(settings.max_document_tokens, "token")
      } (four characters a token), but got ${text.length} characters`,
    );
  }
  return text;
}

/** One document: a string, or an object whose `text` is (its other fields are ignored, as
 * Jina and Cohere's v1 clients send some). */
function documentText(item: Reader, settings: RerankConfig): string {
  if (typeof item.value === "object" && item.value !== null && !Array.isArray(item.value)) {
    const text = item.object().get("text");
    return checked(text, text.string(TEXT), settings);
  }
  return checked(item, item.string(DOCUMENT), settings);
}

/**
 * Validates a rerank request for a model with `settings`: `query` (non-empty, within
 * `max_document_tokens`), `documents` (1 to `max_documents`, each non-empty and within
 * `max_document_tokens`), `top_n` (1 to `max_documents`; more than the documents answers them
 * all, as Cohere does), `return_documents` (default false). Throws a 400 naming the parameter.
 * Unknown fields are ignored, as on the other endpoints.
 */
export function readRerankRequest(
  body: Record<string, unknown>,
  model: string,
  settings: RerankConfig,
): RerankRequest {
  const f = readRequest(body);
  const queryField = f.get("query");
  const query = checked(queryField, queryField.string(QUERY), settings);
  const field = f.get("documents");
  const items = field.array(DOCUMENTS);
  if (items.length > settings.max_documents) {
    throw field.invalid(
      `expected at most ${
        count(settings.max_documents, "document")
      } in a request, but got ${items.length}`,
    );
  }
  const documents = items.map((item) => documentText(item, settings));
  const topN = f.integer("top_n", { optional: true, min: 1, max: settings.max_documents });
  return {
    model,
    query,
    documents,
    top_n: topN ?? null,
    return_documents: f.boolean("return_documents", OPTIONAL_FLAG) ?? false,
  };
}
