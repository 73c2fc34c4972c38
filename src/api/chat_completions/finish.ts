import type { FinishReason } from "../../canonical/result.ts";

/**
 * The `finish_reason` for a canonical finish, and the `stop_reason` beside it.
 *
 * A paused turn (Anthropic's `pause_turn`: a long server-side tool loop stopped so the client
 * can continue it) is not complete, so it is not reported as `stop`, which would make a client
 * take a partial answer for the whole one. It is `length`, the standard value that means "cut
 * short; send the conversation back to continue", with the non-standard `stop_reason:
 * "pause_turn"` on the choice for clients that tell the two apart. `stop_reason` also carries
 * any other upstream reason that says more than `finish_reason` (Anthropic's `refusal`). A
 * finish in error is `error`, as OpenRouter reports it.
 */
export function renderFinish(
  finish: FinishReason,
  detail: string | undefined,
): { finish_reason: string; stop_reason?: string } {
  if (finish === "pause") return { finish_reason: "length", stop_reason: detail ?? "pause_turn" };
  return detail === undefined
    ? { finish_reason: finish }
    : { finish_reason: finish, stop_reason: detail };
}
