/**
 * Embeddings through an OpenAI-style `POST {base_url}/embeddings` (OpenAI, Ollama, vLLM, TEI,
 * LM Studio): the request's fields passed through with the upstream's model id, the vectors
 * passed back as the upstream wrote them (base64 stays base64, never decoded). An upstream that
 * ignored `encoding_format` has its vectors converted to the encoding asked for.
 */
import { upstreamError } from "../../errors.ts";
import type { EmbeddingRequest, EmbeddingResult } from "../../types/openai.ts";
import { vectorFromBase64, vectorToBase64 } from "../embedding_encoding.ts";
import type { CallContext } from "../types.ts";
import { passEmbeddings } from "./embedding_pass.ts";
import { chatPost } from "../upstream/request.ts";
import type { Upstream } from "../upstream/upstream.ts";
import { isObject, malformed } from "../wire.ts";

/** The body of `POST /embeddings`. */
export interface OpenAIEmbeddingBody {
  model: string;
  input: string[] | number[][];
  encoding_format: "float" | "base64";
  dimensions?: number;
  user?: string;
}

/** The upstream request body for `req`. */
export function toOpenAIEmbeddingBody(
  req: EmbeddingRequest,
  upstreamModel: string,
): OpenAIEmbeddingBody {
  const body: OpenAIEmbeddingBody = {
    model: upstreamModel,
    input: req.input,
    encoding_format: req.encoding_format,
  };
  if (req.dimensions !== null) body.dimensions = req.dimensions;
  if (req.user !== null) body.user = req.user;
  return body;
}

/** One vector of an answer in `encoding`; a 502 for one that is neither a number array nor
 * base64 float32s. */
function vector(value: unknown, encoding: EmbeddingRequest["encoding_format"], at: number) {
  if (typeof value === "string") {
    if (encoding === "base64") return value;
    const floats = vectorFromBase64(value);
    if (floats !== null) return floats;
  } else if (Array.isArray(value) && value.every((v) => typeof v === "number")) {
    return encoding === "float" ? value as number[] : vectorToBase64(value as number[]);
  }
  throw malformed(`embeddings answer (data[${at}].embedding is not a vector)`);
}

/** Reads an embeddings answer that must hold `expected` vectors, put in `index` order. */
export function readEmbeddingAnswer(
  data: unknown,
  expected: number,
  encoding: EmbeddingRequest["encoding_format"],
): EmbeddingResult {
  const items = isObject(data) ? data.data : undefined;
  if (!Array.isArray(items)) throw malformed("embeddings answer (no data array)");
  if (items.length !== expected) {
    throw upstreamError(
      `The upstream embedding model returned ${items.length} vectors for ${expected} inputs.`,
    );
  }
  const embeddings: (number[] | string)[] = new Array(expected);
  items.forEach((item, i) => {
    const index = isObject(item) && item.index !== undefined ? item.index : i;
    if (!isObject(item) || !Number.isInteger(index) || embeddings[index as number] !== undefined) {
      throw malformed(`embeddings answer (data[${i}] has no index of its own)`);
    }
    if ((index as number) < 0 || (index as number) >= expected) {
      throw malformed(`embeddings answer (data[${i}].index ${index} is out of range)`);
    }
    embeddings[index as number] = vector(item.embedding, encoding, i);
  });
  const usage = isObject(data) && isObject(data.usage) ? data.usage : {};
  const prompt = usage.prompt_tokens;
  return {
    embeddings,
    promptTokens: typeof prompt === "number" && Number.isSafeInteger(prompt) && prompt >= 0
      ? prompt
      : 0,
  };
}

/** Embeds a request through an OpenAI-style upstream. */
export async function openAIEmbed(
  upstream: Upstream,
  req: EmbeddingRequest,
  ctx: CallContext,
): Promise<EmbeddingResult> {
  const body = toOpenAIEmbeddingBody(req, ctx.upstreamModel);
  if (req.task_type !== null) ctx.dropped.add("task_type");
  const request = chatPost(ctx, "/embeddings", body, false);
  if (req.encoding_format !== "base64") {
    return readEmbeddingAnswer(await upstream.json(request), req.input.length, "float");
  }
  // base64 vectors pass on as the upstream wrote them, unparsed and uncopied (4.08x the
  // pass-through's CPU parsed and re-serialised at 100 x 1536; see embedding_pass.ts).
  // Its buffer is lent: given back once the client has the answer, or once it is parsed.
  const { bytes, release } = await upstream.lend(request);
  const passed = passEmbeddings(bytes, req.input.length, ctx.model.id);
  if (passed) return { ...passed, release };
  let data: unknown;
  try {
    data = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw upstreamError("The upstream provider answered with a body that is not JSON.");
  } finally {
    release();
  }
  return readEmbeddingAnswer(data, req.input.length, "base64");
}
