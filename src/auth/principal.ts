import type { GuardrailConfig, LimitScope, WindowLimit } from "../config/types.ts";
import type { Budget } from "../limits/budget.ts";
import type { Viewer } from "../catalogue/model.ts";
import { ANONYMOUS_VIEWER } from "../catalogue/model.ts";

/** An API key's stored record (DESIGN §5); the key itself is never stored, only its hash. */
export interface KeyRecord {
  id: string;
  name: string;
  /** Hex SHA-256 of the key. */
  hash: string;
  /** Unix milliseconds. */
  created: number;
  last_used: number | null;
  disabled: boolean;
  /** Allowed model ids or `*` globs; `null` allows every model. */
  models: string[] | null;
  preview: boolean;
  /** Per-scope overrides of the configured key limits. */
  limits: Partial<Record<LimitScope, Partial<WindowLimit>>>;
  /** Requests of the key that may run at once (absent or `null`: any number). */
  max_concurrent?: number | null;
  /** What the key may spend per UTC day and month, in currency units (absent: no budget). */
  budget?: Budget | null;
  /** Guardrails on the key's chat calls, after the model's (absent or `null`: none). */
  guardrails?: GuardrailConfig[] | null;
  /** Whether its calls use the response cache of models that have one: `true` also where the
   * model's cache is not `enabled`, `false` never (absent or `null`: as the model says). */
  cache?: boolean | null;
}

/** Who made a request. */
export type Principal =
  | { kind: "anonymous" }
  | { kind: "key"; key: KeyRecord };

/** The anonymous principal. */
export const ANONYMOUS: Principal = { kind: "anonymous" };

/** What a principal may see and use in the catalogue. */
export function viewerOf(principal: Principal): Viewer {
  if (principal.kind === "anonymous") return ANONYMOUS_VIEWER;
  return { keyId: principal.key.id, preview: principal.key.preview, models: principal.key.models };
}
