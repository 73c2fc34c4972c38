/**
 * Bedrock's `CountTokens` for a chat request (`POST /model/{modelId}/count-tokens` with the
 * Converse input: messages, system, tools and the model's extra fields), the count the call
 * would be billed. Bedrock counts for a foundation model, not for an inference profile: a
 * profile's geography (`us.`, `eu.`, `global.`...) is taken off. A model it cannot count for
 * (Bedrock answers a `ValidationException`) gets the gateway's estimate, as an Anthropic
 * upstream without count_tokens does.
 */
import type { CanonicalRequest } from "../../canonical/conversation.ts";
import { promptTokens } from "../../canonical/prompt_tokens.ts";
import { ApiError } from "../../errors.ts";
import type { CallContext } from "../types.ts";
import { chatPost } from "../upstream/request.ts";
import type { Upstream } from "../upstream/upstream.ts";
import { isObject, malformed } from "../wire.ts";
import { bedrockModelPath } from "./model_path.ts";
import { toConverseRequest } from "./request.ts";

/** The geographies of Bedrock's system-defined inference profiles (`us.anthropic.claude-...`). */
const PROFILE_PREFIX = /^(?:us|us-gov|eu|apac|jp|au|ca|global)\.(?=[a-z0-9-]+\.)/;

/** The foundation model an inference profile id stands for (`us.anthropic.claude-...` to
 * `anthropic.claude-...`); any other id (a foundation model's, an ARN) as it is. */
export function foundationModel(modelId: string): string {
  return modelId.replace(PROFILE_PREFIX, "");
}

/** The input tokens of `req` on `ctx`'s model, by Bedrock's count or else the estimate. */
export async function countBedrockTokens(
  upstream: Upstream,
  req: CanonicalRequest,
  ctx: CallContext,
): Promise<number> {
  // The request as Converse would take it; what it drops is the call's to report, not the count's.
  const { body } = toConverseRequest(req, ctx.upstreamModel, new Set());
  const converse: Record<string, unknown> = { messages: body.messages };
  if (body.system !== undefined) converse.system = body.system;
  if (body.toolConfig !== undefined) converse.toolConfig = body.toolConfig;
  if (body.additionalModelRequestFields !== undefined) {
    converse.additionalModelRequestFields = body.additionalModelRequestFields;
  }
  const path = bedrockModelPath(foundationModel(ctx.upstreamModel), "count-tokens");
  let data: unknown;
  try {
    data = await upstream.json(chatPost(ctx, path, { input: { converse } }, false));
  } catch (e) {
    if (e instanceof ApiError && e.status === 400 && e.code === "ValidationException") {
      return promptTokens(req);
    }
    throw e;
  }
  const count = isObject(data) ? data.inputTokens : undefined;
  if (typeof count !== "number" || !Number.isInteger(count) || count < 0) {
    throw malformed("CountTokens answer (no inputTokens)");
  }
  return count;
}
