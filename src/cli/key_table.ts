import { keyView } from "../auth/key_fields.ts";
import type { KeyRecord } from "../auth/principal.ts";
import { LIMIT_SCOPES } from "../config/types.ts";
import { formatTable } from "./table.ts";

/** Keys as `deno task keys list` and `show` print them: one row each, never the key itself. */
export function keyTable(records: readonly KeyRecord[]): string {
  const rows = [["ID", "NAME", "CREATED", "LAST USED", "STATUS", "MODELS", "PREVIEW", "LIMITS"]];
  for (const r of records) {
    const view = keyView(r);
    rows.push([
      r.id,
      r.name,
      view.created.slice(0, 19) + "Z",
      view.last_used === null ? "never" : view.last_used.slice(0, 19) + "Z",
      r.disabled ? "disabled" : "active",
      r.models === null ? "all" : r.models.join(","),
      r.preview ? "yes" : "no",
      describeLimits(r.limits),
    ]);
  }
  return formatTable(rows);
}

/** A key's own request limits, like "chat 100/min, images unlimited/day", or "defaults". */
function describeLimits(limits: KeyRecord["limits"]): string {
  const parts: string[] = [];
  for (const scope of LIMIT_SCOPES) {
    const own = limits[scope];
    if (!own) continue;
    if (own.per_minute !== undefined) {
      parts.push(`${scope} ${own.per_minute ?? "unlimited"}/min`);
    }
    if (own.per_day !== undefined) parts.push(`${scope} ${own.per_day ?? "unlimited"}/day`);
  }
  return parts.length === 0 ? "defaults" : parts.join(", ");
}
