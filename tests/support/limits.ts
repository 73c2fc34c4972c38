/** Rate limits high enough that end-to-end tests never meet them (set as `raw.limits`). */
export const GENEROUS_LIMITS = {
  anonymous: {
    chat: { per_minute: 1000, per_day: 100000 },
    images: { per_minute: 1000, per_day: 100000 },
    other: { per_minute: null, per_day: 1000000 },
  },
  key: {
    chat: { per_minute: 1000, per_day: 100000 },
    images: { per_minute: 1000, per_day: 100000 },
    other: { per_minute: null, per_day: 1000000 },
  },
};
