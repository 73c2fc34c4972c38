/** The canonical options some upstreams have no field for, and how requests name them. */
import type { Options } from "../canonical/conversation.ts";

/** Each such option's wire name (the dropped-params header names these). */
const WIRE_NAMES = {
  seed: "seed",
  frequencyPenalty: "frequency_penalty",
  presencePenalty: "presence_penalty",
  metadata: "metadata",
  user: "user",
  verbosity: "verbosity",
} as const;

/** An option an upstream may have no field for. */
export type DroppableOption = keyof typeof WIRE_NAMES;

/** Adds to `dropped` the wire name of each option of `lacking` the request sets. */
export function dropLacking(
  options: Options,
  lacking: readonly DroppableOption[],
  dropped: Set<string>,
): void {
  for (const option of lacking) if (options[option] !== undefined) dropped.add(WIRE_NAMES[option]);
}
