import { ApiError, unsupportedCapability, upstreamError } from "../../errors.ts";
import { json } from "../../http/response.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import type { ImageResponse } from "../../types/openai.ts";
import { imageModelId, readImageRequest } from "./request.ts";
import { openModel } from "../shared/model_call.ts";

const JPEG_DATA_URL = "data:image/jpeg;base64,";

/**
 * `POST /v1/images/generations` (spec §4.4, preview): the model is resolved first (404, or
 * 401/403 for callers not granted preview), then the parameters are checked against it.
 */
export async function generateImages(ctx: RequestContext): Promise<Response> {
  const { config, clock } = ctx.services;
  const body = ctx.body;
  const { record, provider, call } = openModel(ctx, imageModelId(body));
  if (!record.image_generation) {
    throw unsupportedCapability(`The model \`${record.id}\` does not generate images.`, "model");
  }
  const { request, responseFormat } = readImageRequest(body, record, record.image_generation);
  if (config.logs.include_content) ctx.content = request.prompt;
  if (!provider.generateImages) {
    throw new ApiError(
      501,
      "server_error",
      `Provider "${record.provider}" cannot generate images.`,
      { code: "not_implemented" },
    );
  }
  const urls = await provider.generateImages(request, call);
  if (urls.length !== request.n || urls.some((u) => !u.startsWith(JPEG_DATA_URL))) {
    throw upstreamError(
      `The provider "${record.provider}" returned ${urls.length} images for n = ${request.n}, or not as JPEG data URLs.`,
    );
  }
  const response: ImageResponse = {
    created: Math.floor(clock.now() / 1000),
    data: urls.map((url) =>
      responseFormat === "url" ? { url } : { b64_json: url.slice(JPEG_DATA_URL.length) }
    ),
  };
  return json(response);
}
