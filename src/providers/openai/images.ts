/**
 * Image generation through an OpenAI-style `POST {base_url}/images/generations`: the images
 * are asked for as base64, checked (count, format, size), and returned as JPEG data URLs. PNG
 * is transcoded with our own decoder and encoder; JPEG passes through unchanged; anything else
 * is a 502.
 */
import { upstreamError } from "../../errors.ts";
import { inspectImage } from "../../http/image_data_url.ts";
import { jpegDataUrl } from "../../images/jpeg.ts";
import { PngError } from "../../images/png.ts";
import { type ImageWork, inlineImageWork } from "../../images/work.ts";
import type { ImageRequest } from "../../types/openai.ts";
import type { CallContext } from "../types.ts";
import { clientClosed } from "../../errors.ts";
import { chatPost } from "../upstream/request.ts";
import type { Upstream } from "../upstream/upstream.ts";
import { isObject, malformed } from "../wire.ts";

/** The body of `POST /images/generations`. */
export interface OpenAIImageBody {
  model: string;
  prompt: string;
  n: number;
  size: string;
  response_format?: "b64_json";
  guidance_scale?: number;
  num_inference_steps?: number;
}

/**
 * Whether an upstream model is one of OpenAI's GPT image models, which always answer in
 * base64 and reject `response_format` ("Unknown parameter").
 */
export function isGptImageModel(upstreamModel: string): boolean {
  return /gpt-image/i.test(upstreamModel);
}

/**
 * The request body: the upstream model, prompt, `n` and size as validated against the model's
 * config, `response_format: "b64_json"` (except for GPT image models, which always give
 * base64), and `guidance_scale` / `num_inference_steps` only for models configured to take them.
 */
export function toOpenAIImageBody(req: ImageRequest, upstreamModel: string): OpenAIImageBody {
  const body: OpenAIImageBody = {
    model: upstreamModel,
    prompt: req.prompt,
    n: req.n,
    size: req.size,
  };
  if (!isGptImageModel(upstreamModel)) body.response_format = "b64_json";
  if (req.guidance_scale !== null) body.guidance_scale = req.guidance_scale;
  if (req.num_inference_steps !== null) body.num_inference_steps = req.num_inference_steps;
  return body;
}

/** The base64 images of an answer; a body without exactly `n` of them is a 502. */
export function readImageAnswer(data: unknown, n: number): string[] {
  const items = isObject(data) ? data.data : undefined;
  if (!Array.isArray(items)) throw malformed("image answer (no data array)");
  if (items.length !== n) {
    throw upstreamError(`The upstream image model returned ${items.length} images for n = ${n}.`);
  }
  return items.map((item, i) => {
    if (isObject(item) && typeof item.b64_json === "string") return item.b64_json;
    if (isObject(item) && typeof item.url === "string") {
      throw upstreamError(
        `The upstream image model answered data[${i}] with a URL instead of base64 data; the gateway asked for b64_json.`,
      );
    }
    throw malformed(`image answer (data[${i}] has no b64_json)`);
  });
}

/**
 * One upstream image as a JPEG data URL of the requested size: a PNG is transcoded, a JPEG
 * (checked to start with SOI, carry a frame of the right size and end with EOI) is passed through
 * as it is. Any other format, a size other than the one asked for, or bytes that are no image
 * are a 502 saying which.
 */
export async function toJpegDataUrl(
  base64: string,
  width: number,
  height: number,
  which: string,
  work: ImageWork = inlineImageWork,
  signal: AbortSignal = new AbortController().signal,
): Promise<string> {
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.fromBase64(base64.replace(/\s+/g, ""));
  } catch {
    throw upstreamError(`The upstream image model's ${which} is not valid base64.`);
  }
  const info = inspectImage(bytes);
  if (!info) {
    throw upstreamError(`The upstream image model's ${which} is not a PNG or JPEG image.`);
  }
  if (info.format !== "png" && info.format !== "jpeg") {
    throw upstreamError(
      `The upstream image model's ${which} is a ${info.format.toUpperCase()} image; the gateway returns JPEG and can only transcode PNG.`,
    );
  }
  if (info.width !== width || info.height !== height) {
    throw upstreamError(
      `The upstream image model's ${which} is ${info.width}x${info.height}, not the ${width}x${height} asked for.`,
    );
  }
  if (info.format === "jpeg") {
    if (bytes[bytes.length - 2] !== 0xff || bytes[bytes.length - 1] !== 0xd9) {
      throw upstreamError(`The upstream image model's ${which} is a JPEG that is cut short.`);
    }
    return jpegDataUrl(bytes);
  }
  try {
    return jpegDataUrl(await work.run({ kind: "png", png: bytes }, signal));
  } catch (e) {
    if (!(e instanceof PngError)) throw e;
    throw upstreamError(`The upstream image model's ${which} is a broken PNG: ${e.message}.`);
  }
}

/** Generates images through an OpenAI-style upstream; one JPEG data URL per image. */
export async function openAIGenerateImages(
  upstream: Upstream,
  req: ImageRequest,
  ctx: CallContext,
  work: ImageWork = inlineImageWork,
): Promise<string[]> {
  const body = toOpenAIImageBody(req, ctx.upstreamModel);
  const data = await upstream.json(chatPost(ctx, "/images/generations", body, false));
  const images = readImageAnswer(data, req.n);
  const urls: string[] = [];
  for (const [i, base64] of images.entries()) {
    if (ctx.signal.aborted) throw clientClosed();
    try {
      urls.push(await toJpegDataUrl(base64, req.width, req.height, `data[${i}]`, work, ctx.signal));
    } catch (e) {
      if (ctx.signal.aborted) throw clientClosed();
      throw e;
    }
  }
  if (ctx.signal.aborted) throw clientClosed();
  return urls;
}
