import type { RequestContext } from "../../pipeline/context.ts";
import { json } from "../../http/response.ts";
import { fromMicros } from "../../limits/pricing.ts";
import { readUsage, utcDay } from "../../log/usage.ts";
import { readChecks } from "../../log/checks.ts";
import { checksView } from "./checks.ts";
import { quote } from "../../quote.ts";
import { invalidValue } from "../../validation/error.ts";
import { OPTIONAL } from "../../validation/reader.ts";
import { queryFields } from "../../validation/query.ts";

/**
 * `GET /admin/usage?day=YYYY-MM-DD` (default: today, UTC): requests, errors, tokens and cost
 * (at the models' `pricing`) per key and model on that day, with each key's name, and the day's
 * totals; per model, the response cache's hit ratio and the guardrails' verdicts. Counted from the
 * request log as its records are written to KV (in the same commits), so every logged request
 * is counted exactly once.
 */
export async function getUsage(ctx: RequestContext): Promise<Response> {
  const q = queryFields(ctx.url.searchParams);
  const day = q.string("day", OPTIONAL) ?? utcDay(ctx.services.clock.now());
  q.done();
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(day) ? Date.parse(`${day}T00:00:00Z`) : NaN;
  if (Number.isNaN(ms) || utcDay(ms) !== day) {
    throw invalidValue("day", `expected a UTC date like 2026-01-15, but got ${quote(day)}`);
  }
  const [rows, keys, checks] = await Promise.all([
    readUsage(ctx.services.kv, day),
    ctx.services.keys.list(),
    readChecks(ctx.services.kv, day),
  ]);
  const names = new Map(keys.map((k) => [k.id, k.name]));
  const totals = { requests: 0, errors: 0, prompt_tokens: 0, completion_tokens: 0, cost: 0 };
  const data = rows.map((row) => {
    totals.requests += row.requests;
    totals.errors += row.errors;
    totals.prompt_tokens += row.prompt_tokens;
    totals.completion_tokens += row.completion_tokens;
    totals.cost += row.cost_micros;
    return {
      key_id: row.key_id,
      key_name: row.key_id === null ? null : names.get(row.key_id) ?? null,
      model: row.model,
      requests: row.requests,
      errors: row.errors,
      prompt_tokens: row.prompt_tokens,
      completion_tokens: row.completion_tokens,
      total_tokens: row.prompt_tokens + row.completion_tokens,
      cost: fromMicros(row.cost_micros),
    };
  });
  return json({
    object: "usage",
    day,
    data,
    totals: {
      ...totals,
      total_tokens: totals.prompt_tokens + totals.completion_tokens,
      cost: fromMicros(totals.cost),
    },
    models: checksView(checks),
  });
}
