/** The `limits` section: requests and tokens per scope and window, and the input image caps. */
import { OPTIONAL, type Reader } from "../validation/reader.ts";
import { COUNT, NULLABLE_COUNT } from "./rules.ts";
import { LIMIT_SCOPES, type LimitsConfig, type ScopeLimits, type WindowLimit } from "./types.ts";

/** The image caps of `limits` when the config sets none. */
export const DEFAULT_IMAGE_CAPS: Readonly<
  Pick<
    LimitsConfig,
    "max_image_pixels" | "max_image_bytes" | "max_request_image_pixels" | "max_request_image_bytes"
  >
> = {
  max_image_pixels: 33_554_432,
  max_image_bytes: 20 * 1024 * 1024,
  max_request_image_pixels: 134_217_728,
  max_request_image_bytes: 20 * 1024 * 1024,
};

const DEFAULT_LIMITS: LimitsConfig = {
  ...DEFAULT_IMAGE_CAPS,
  anonymous: {
    chat: { per_minute: 10, per_day: 500 },
    other: { per_minute: null, per_day: 50_000 },
    images: { per_minute: 2, per_day: 20 },
  },
  key: {
    chat: { per_minute: 60, per_day: 10_000 },
    other: { per_minute: null, per_day: 500_000 },
    images: { per_minute: 10, per_day: 500 },
  },
};

/** The per-minute and per-day limits of one scope (requests, and for `tokens` scopes tokens
 * too); absent ones keep `fallback`'s. */
function readWindow(r: Reader, fallback: WindowLimit, tokens: boolean): WindowLimit {
  const f = r.object(OPTIONAL);
  if (f === undefined) return fallback;
  const perMinute = f.integer("per_minute", NULLABLE_COUNT);
  const perDay = f.integer("per_day", NULLABLE_COUNT);
  const window: WindowLimit = {
    per_minute: perMinute === undefined ? fallback.per_minute : perMinute,
    per_day: perDay === undefined ? fallback.per_day : perDay,
  };
  if (tokens) {
    for (const name of ["tokens_per_minute", "tokens_per_day"] as const) {
      const value = f.integer(name, NULLABLE_COUNT);
      const inherited = fallback[name];
      if (value !== undefined) window[name] = value;
      else if (inherited !== undefined) window[name] = inherited;
    }
  }
  f.done();
  return window;
}

function readScopes(r: Reader, fallback: ScopeLimits): ScopeLimits {
  const f = r.object(OPTIONAL);
  if (f === undefined) return fallback;
  const out = {} as ScopeLimits;
  for (const scope of LIMIT_SCOPES) {
    out[scope] = readWindow(f.get(scope), fallback[scope], scope === "chat");
  }
  f.done();
  return out;
}

/** The `limits` section; what it leaves out keeps the defaults. */
export function readLimits(r: Reader): LimitsConfig {
  const f = r.object(OPTIONAL);
  if (f === undefined) return structuredClone(DEFAULT_LIMITS);
  const limits: LimitsConfig = {
    anonymous: readScopes(f.get("anonymous"), DEFAULT_LIMITS.anonymous),
    key: readScopes(f.get("key"), DEFAULT_LIMITS.key),
    max_image_pixels: f.integer("max_image_pixels", COUNT) ?? DEFAULT_LIMITS.max_image_pixels,
    max_image_bytes: f.integer("max_image_bytes", COUNT) ?? DEFAULT_LIMITS.max_image_bytes,
    max_request_image_pixels: f.integer("max_request_image_pixels", COUNT) ??
      DEFAULT_LIMITS.max_request_image_pixels,
    max_request_image_bytes: f.integer("max_request_image_bytes", COUNT) ??
      DEFAULT_LIMITS.max_request_image_bytes,
  };
  f.done();
  return structuredClone(limits);
}
