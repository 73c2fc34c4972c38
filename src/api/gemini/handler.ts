/**
 * `POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent` and `:countTokens`
 * (Google's Gemini API; also under `/v1`): validate into a canonical request, resolve the model
 * and check its capabilities; then, for a model of a back end that speaks Gemini's API, forward
 * the call as written (only the model rewritten); for any other, call its provider through the
 * canonical model and answer a `GenerateContentResponse` or its stream (SSE with `?alt=sse`,
 * else one JSON array). Request fields the back end left out are named in
 * `x-switchyard-dropped-params`.
 */
import { inputTokens } from "../shared/input_tokens.ts";
import { promptTokens } from "../../canonical/prompt_tokens.ts";
import type { CanonicalRequest, Part } from "../../canonical/conversation.ts";
import type { CanonicalResult } from "../../canonical/result.ts";
import type { Uses } from "../../canonical/uses.ts";
import type { ApiError } from "../../errors.ts";
import { json } from "../../http/response.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { aroundModel } from "../../pipeline/model_step.ts";
import type { PassthroughCall, Provider } from "../../providers/types.ts";
import type { CountTokensResponse } from "../../types/gemini.ts";
import { checkChat } from "../shared/capabilities.ts";
import {
  callChat,
  type ChatDoor,
  type ModelTarget,
  openModel,
  untilClientLeaves,
} from "../shared/model_call.ts";
import { HeldRequest } from "../shared/held_request.ts";
import { answerPassedThrough } from "../shared/passed_call.ts";
import { modelMethod } from "./method.ts";
import { toGeminiParts } from "./parts.ts";
import { parseCountTokensRequest, type ParsedGemini, parseGeminiRequest } from "./request.ts";
import { renderGenerateContent } from "./response.ts";
import { type GeminiFraming, GeminiStreamRenderer } from "./stream.ts";

/** The protocol, as capability refusals name it. */
const PROTOCOL = "Google's Gemini API";

/** The handler of `POST .../models/{model}:{method}`. */
export function callModelMethod(ctx: RequestContext): Promise<Response> {
  const { model, method } = modelMethod(ctx.params.id!);
  const caps = ctx.services.config.limits;
  if (method === "countTokens") return countTokens(ctx, model);
  const stream = method === "streamGenerateContent";
  const parsed = parseGeminiRequest(ctx.body, { model, stream }, caps);
  const framing: GeminiFraming = ctx.url.searchParams.get("alt") === "sse" ? "sse" : "json_array";
  return callChat(ctx, openModel(ctx, model), new GeminiDoor(ctx, parsed, framing)).then(
    (response) => stream && framing === "json_array" ? asJsonArray(response) : response,
  );
}

/** A stream framed as one JSON array, with its content type. */
function asJsonArray(response: Response): Response {
  if (response.ok) response.headers.set("content-type", "application/json");
  return response;
}

/** The Gemini protocol's side of a chat call. */
class GeminiDoor implements ChatDoor {
  readonly name = "gemini";
  readonly stream: boolean;
  readonly needs;
  readonly passthrough;
  readonly #ctx: RequestContext;
  readonly #framing: GeminiFraming;
  readonly #includeThoughts: boolean;
  readonly #req: HeldRequest;

  constructor(ctx: RequestContext, parsed: ParsedGemini, framing: GeminiFraming) {
    const { req, uses } = parsed;
    this.#ctx = ctx;
    this.#req = new HeldRequest(req);
    this.#framing = framing;
    this.#includeThoughts = parsed.includeThoughts;
    this.stream = req.stream;
    this.needs = needsOf(req, uses);
    this.passthrough = {
      speaks: speaksGemini,
      answer: (target: ModelTarget) => this.#forward(target),
    };
  }

  /** The call passed through as written to a back end that speaks Gemini's API. */
  #forward(target: ModelTarget): Promise<Response> {
    const req = this.#req.take();
    const endpoint = req.stream ? "streamGenerateContent" : "generateContent";
    const sent = passed(this.#ctx, endpoint, target.call.model.id, this.#framing);
    const framing = this.#framing;
    return answerPassedThrough(this.#ctx, target, req, sent, {
      name: "gemini",
      logged: (body) => body.candidates,
      errorEvent: (error) => errorChunk(error, framing),
    });
  }

  canonical({ call }: ModelTarget): CanonicalRequest {
    return this.#req.canonical(this.#ctx, call);
  }

  answer(result: CanonicalResult, { record }: ModelTarget): unknown {
    return renderGenerateContent(result, {
      model: record.id,
      requestId: this.#ctx.requestId,
      includeThoughts: this.#includeThoughts,
    });
  }

  /** The stream's renderer; its usage until the back end reports one is the estimate of the
   * prompt (a count from the back end would be a call before the answer's). */
  renderer({ record }: ModelTarget, req: CanonicalRequest): GeminiStreamRenderer {
    return new GeminiStreamRenderer({
      model: record.id,
      requestId: this.#ctx.requestId,
      includeThoughts: this.#includeThoughts,
      framing: this.#framing,
      estimate: promptTokens(req),
    });
  }

  logged(parts: readonly Part[]): unknown {
    return toGeminiParts(parts, true);
  }
}

/** What a request asks of its model. */
function needsOf(req: CanonicalRequest, uses: Uses) {
  return { tools: req.options.tools.length, uses, protocol: PROTOCOL };
}

/** Whether a back end takes Gemini's API as written. */
function speaksGemini(provider: Provider): boolean {
  return provider.passes?.has("gemini_generate") ?? false;
}

/** `:countTokens`: `{"totalTokens": N}`, the back end's own count when it has one (a Gemini
 * back end's `countTokens`, the simulator's), else the gateway's estimate. */
async function countTokens(ctx: RequestContext, model: string): Promise<Response> {
  const { req, uses } = parseCountTokensRequest(ctx.body, model, ctx.services.config.limits);
  const { record, provider: adapter, call } = openModel(ctx, model);
  // The model steps see a count too (see the Messages door's count_tokens).
  const stepped = aroundModel(ctx.services.modelSteps, adapter, ctx, record, "count");
  const provider = stepped ?? adapter;
  const passedThrough = stepped === null && speaksGemini(provider);
  checkChat(record, { ...needsOf(req, uses), passedThrough });
  if (passedThrough) {
    const passthrough = provider.passthrough!.bind(provider);
    const sent = passed(ctx, "countTokens", record.id, "sse");
    const answer = await untilClientLeaves(ctx, () => passthrough(sent, call));
    return json(answer.kind === "json" ? answer.body : {});
  }
  const total = await untilClientLeaves(ctx, () => inputTokens(provider, req, call));
  const body: CountTokensResponse = {
    totalTokens: total,
    promptTokensDetails: [{ modality: "TEXT", tokenCount: total }],
  };
  return json(body);
}

/** The client's call as it is passed through: its body and the model id the answer shows. */
function passed(
  ctx: RequestContext,
  endpoint: "generateContent" | "streamGenerateContent" | "countTokens",
  model: string,
  framing: GeminiFraming,
): PassthroughCall {
  // Taken from the context: a passed-through stream need not keep the body.
  const raw = ctx.takeBodyBytes();
  const body = ctx.takeBody();
  const shown = { modelVersion: model };
  const call: PassthroughCall = {
    protocol: "gemini_generate",
    endpoint,
    body,
    headers: {},
    shown,
    framing,
  };
  if (raw !== null) call.raw = raw;
  return call;
}

/** A failure after a passed-through stream began, as Gemini's error chunk. */
function errorChunk(error: ApiError, framing: GeminiFraming): string {
  const chunk = JSON.stringify(error.toGeminiBody());
  return framing === "sse" ? `data: ${chunk}\r\n\r\n` : `,\r\n${chunk}]`;
}
