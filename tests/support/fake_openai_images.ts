/**
 * The fake OpenAI upstream's `POST /v1/images/generations`, checked and answered as OpenAI
 * documents it, with real PNG images (written by pngjs) of the size asked for.
 *
 * Models: `dall-e-2` (256/512/1024 squares, n ≤ 10), `dall-e-3` (1024x1024, 1792x1024,
 * 1024x1792, n = 1, a `revised_prompt`) and `gpt-image-*` (1024x1024, 1536x1024, 1024x1536 or
 * auto, n ≤ 10; always base64, and `response_format` is an unknown parameter) answer like
 * OpenAI: DALL·E models send `url`s unless asked for `b64_json`. Any other model plays a
 * compatible server for diffusion models: any WIDTHxHEIGHT, n ≤ 10, and it also takes
 * `guidance_scale` and `num_inference_steps`, which OpenAI's models reject.
 */
import { PNG } from "npm:pngjs@7.0.0";
import { checkOpenAIHeaders, CREATED, isObj } from "./fake_openai.ts";
import type { Answer, FakeRoute } from "./fake_upstream.ts";

type Obj = Record<string, unknown>;

interface ImageModel {
  /** Allowed sizes; `null`: any WIDTHxHEIGHT. */
  sizes: string[] | null;
  maxN: number;
  /** Whether it takes `response_format` (else it is an unknown parameter and it gives base64). */
  responseFormat: boolean;
  /** Whether it takes `guidance_scale` and `num_inference_steps`. */
  tuning: boolean;
}

const GPT_IMAGE: ImageModel = {
  sizes: ["1024x1024", "1536x1024", "1024x1536", "auto"],
  maxN: 10,
  responseFormat: false,
  tuning: false,
};

const OPENAI_MODELS: Record<string, ImageModel> = {
  "dall-e-2": {
    sizes: ["256x256", "512x512", "1024x1024"],
    maxN: 10,
    responseFormat: true,
    tuning: false,
  },
  "dall-e-3": {
    sizes: ["1024x1024", "1792x1024", "1024x1792"],
    maxN: 1,
    responseFormat: true,
    tuning: false,
  },
};

const COMPATIBLE: ImageModel = { sizes: null, maxN: 10, responseFormat: true, tuning: true };

/** Fields of OpenAI's CreateImageRequest. */
const FIELDS = new Set([
  "model",
  "prompt",
  "n",
  "size",
  "response_format",
  "quality",
  "style",
  "user",
  "output_format",
  "output_compression",
  "background",
  "moderation",
  "stream",
  "partial_images",
]);

function modelOf(name: unknown): ImageModel {
  const id = typeof name === "string" ? name : "dall-e-2";
  if (/^gpt-image/.test(id)) return GPT_IMAGE;
  return OPENAI_MODELS[id] ?? COMPATIBLE;
}

/** Checks an image generation request; returns what is wrong with it. */
export function checkImageRequest(headers: Headers, body: unknown, apiKey: string): string[] {
  const bad = checkOpenAIHeaders(headers, apiKey);
  if (!isObj(body)) return [...bad, "body is not a JSON object"];
  const model = modelOf(body.model);
  for (const key of Object.keys(body)) {
    const known = FIELDS.has(key) ||
      (model.tuning && (key === "guidance_scale" || key === "num_inference_steps"));
    if (!known || (key === "response_format" && !model.responseFormat)) {
      bad.push(`Unknown parameter: '${key}'.`);
    }
  }
  if (body.model !== undefined && typeof body.model !== "string") bad.push("model: a string");
  if (typeof body.prompt !== "string" || body.prompt === "") bad.push("prompt: a string");
  const n = body.n ?? 1;
  if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > model.maxN) {
    bad.push(`Invalid 'n': an integer from 1 to ${model.maxN}, got ${JSON.stringify(n)}.`);
  }
  const size = body.size;
  if (size !== undefined) {
    const ok = typeof size === "string" &&
      (model.sizes ? model.sizes.includes(size) : /^[1-9]\d*x[1-9]\d*$/.test(size));
    if (!ok) bad.push(`Invalid value: ${JSON.stringify(size)}. Supported sizes: ${model.sizes}.`);
  }
  const format = body.response_format;
  if (model.responseFormat && format !== undefined && format !== "url" && format !== "b64_json") {
    bad.push("response_format: url or b64_json");
  }
  const guidance = body.guidance_scale;
  if (guidance !== undefined && (typeof guidance !== "number" || !Number.isFinite(guidance))) {
    bad.push("guidance_scale: a number");
  }
  const steps = body.num_inference_steps;
  if (steps !== undefined && (!Number.isInteger(steps) || (steps as number) < 1)) {
    bad.push("num_inference_steps: a positive integer");
  }
  return bad;
}

/** A PNG for image `index` of a prompt: red rises left to right, green top to bottom, and the
 * blue level differs by prompt and index. */
export function fakePicture(prompt: string, index: number, width: number, height: number) {
  let seed = 0;
  for (const c of prompt) seed = (seed * 31 + c.charCodeAt(0)) % 251;
  const png = new PNG({ width, height, colorType: 2 });
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = (y * width + x) * 4;
      png.data[p] = Math.round(x * 255 / (width - 1));
      png.data[p + 1] = Math.round(y * 255 / (height - 1));
      png.data[p + 2] = (seed + index * 80) % 256;
      png.data[p + 3] = 255;
    }
  }
  return new Uint8Array(PNG.sync.write(png));
}

/** The `/v1/images/generations` route of the fake OpenAI upstream. */
export function imagesRoute(apiKey: string): FakeRoute {
  return {
    check: (headers, body) => checkImageRequest(headers, body, apiKey),
    answer(body): Answer {
      const name = (body.model as string | undefined) ?? "dall-e-2";
      const model = modelOf(name);
      const n = (body.n as number | undefined) ?? 1;
      const size = (body.size as string | undefined) ?? model.sizes?.[0] ?? "1024x1024";
      const [width, height] = (size === "auto" ? "1024x1024" : size).split("x").map(Number) as [
        number,
        number,
      ];
      const prompt = body.prompt as string;
      const base64 = !model.responseFormat || body.response_format === "b64_json";
      const data = Array.from({ length: n }, (_, i) => {
        const item: Obj = base64
          ? { b64_json: fakePicture(prompt, i, width, height).toBase64() }
          : { url: `https://fake-images.example/${i}.png` };
        if (name === "dall-e-3") item.revised_prompt = `A detailed picture of ${prompt}`;
        return item;
      });
      if (model !== GPT_IMAGE) {
        return { kind: "json", status: 200, body: { created: CREATED, data } };
      }
      return {
        kind: "json",
        status: 200,
        body: {
          created: CREATED,
          background: "opaque",
          data,
          output_format: "png",
          quality: "high",
          size: `${width}x${height}`,
          usage: {
            input_tokens: 12,
            input_tokens_details: { image_tokens: 0, text_tokens: 12 },
            output_tokens: 4160 * n,
            total_tokens: 12 + 4160 * n,
          },
        },
      };
    },
  };
}
