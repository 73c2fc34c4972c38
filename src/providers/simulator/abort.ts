import { ApiError } from "../../errors.ts";

/** Stops simulated work once the caller has gone: a 499 that the app logs as a disconnect. */
export function stopIfAborted(signal: AbortSignal): void {
  if (signal.aborted) {
    throw new ApiError(499, "invalid_request_error", "The client closed the request.", {
      code: "client_disconnected",
    });
  }
}
