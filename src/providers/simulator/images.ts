import { jpegDataUrl } from "../../images/jpeg.ts";
import { type ImageWork, inlineImageWork } from "../../images/work.ts";
import type { ImageRequest } from "../../types/openai.ts";
import type { CallContext } from "../types.ts";
import { stopIfAborted } from "./abort.ts";

/** Defaults for models that do not take the parameters (the spec's defaults). */
const DEFAULT_GUIDANCE = 3.5;
const DEFAULT_STEPS = 30;

/**
 * The simulator's image model: paints a scene read from the prompt (deterministic: the same
 * prompt, size and parameters give the same picture; image i of n uses its own seed) and encodes
 * it as a baseline JPEG, on `work` (the image workers, off the event loop). Stops on abort.
 */
export async function renderImages(
  req: ImageRequest,
  ctx: CallContext,
  work: ImageWork = inlineImageWork,
): Promise<string[]> {
  const urls: string[] = [];
  for (let index = 0; index < req.n; index++) {
    stopIfAborted(ctx.signal);
    let jpeg: Uint8Array;
    try {
      jpeg = await work.run({
        kind: "paint",
        paint: {
          prompt: req.prompt,
          index,
          width: req.width,
          height: req.height,
          guidanceScale: req.guidance_scale ?? DEFAULT_GUIDANCE,
          steps: req.num_inference_steps ?? DEFAULT_STEPS,
        },
      }, ctx.signal);
    } catch (e) {
      stopIfAborted(ctx.signal);
      throw e;
    }
    urls.push(jpegDataUrl(jpeg));
  }
  stopIfAborted(ctx.signal);
  return urls;
}
