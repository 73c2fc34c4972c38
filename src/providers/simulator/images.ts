import { encodeJpeg, jpegDataUrl } from "../../images/jpeg.ts";
import { stopIfAborted } from "./abort.ts";
import type { ImageRequest } from "../../types/openai.ts";
import type { CallContext } from "../types.ts";
import { paintScene } from "./painter.ts";
import { planScene } from "./scene.ts";

/** Defaults for models that do not take the parameters (the spec's defaults). */
const DEFAULT_GUIDANCE = 3.5;
const DEFAULT_STEPS = 30;

/**
 * The simulator's image model: paints a scene read from the prompt (deterministic: the same
 * prompt, size and parameters give the same picture; image i of n uses its own seed) and encodes
 * it as a baseline JPEG. Yields to the event loop between images and stops on abort.
 */
export async function renderImages(req: ImageRequest, ctx: CallContext): Promise<string[]> {
  const urls: string[] = [];
  for (let i = 0; i < req.n; i++) {
    stopIfAborted(ctx.signal);
    const rgb = paintScene(planScene(req.prompt, i), req.width, req.height, {
      guidanceScale: req.guidance_scale ?? DEFAULT_GUIDANCE,
      steps: req.num_inference_steps ?? DEFAULT_STEPS,
    });
    urls.push(
      jpegDataUrl(encodeJpeg({ width: req.width, height: req.height, data: rgb, channels: 3 })),
    );
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  stopIfAborted(ctx.signal);
  return urls;
}
