import type { ImageWork } from "../../images/work.ts";

/** Settings the simulator's parts share. */
export interface SimulatorOptions {
  /** Delay per generated token, in milliseconds. */
  tokenDelayMs: number;
  /** Where pictures are painted and encoded. */
  images: ImageWork;
}
