/** Switchyard's version: `version` in deno.json, printed at start and shown by `/healthz`. */
import meta from "../deno.json" with { type: "json" };

/** The running version, like `2.0.0`. */
export const VERSION: string = meta.version;
