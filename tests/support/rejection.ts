import { APIError } from "npm:openai@7.55.0";
import { ApiError } from "../../src/errors.ts";

/** Runs `run` expecting it to throw a `type`; returns that error. Other errors propagate. */
async function rejection<E extends Error>(
  type: new (...args: never[]) => E,
  run: () => unknown,
): Promise<E> {
  try {
    await run();
  } catch (e) {
    if (e instanceof type) return e;
    throw e;
  }
  throw new Error(`expected ${type.name}, got a result`);
}

/** The gateway's ApiError that `run` throws (an adapter call, a reader). */
export function gatewayError(run: () => unknown): Promise<ApiError> {
  return rejection(ApiError, run);
}

/** The `openai` client's APIError that `run` throws. */
export function clientError(run: () => unknown): Promise<APIError> {
  return rejection(APIError, run);
}
