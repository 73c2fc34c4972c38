/**
 * `deno task keys ...`: creates, lists, changes and revokes API keys directly in the KV that
 * the server uses (same config: `--config`, `SWITCHYARD_CONFIG`, `SWITCHYARD_KV`), without a
 * running server.
 */
import { allowListWarnings, keyView, readKeyFields } from "../auth/key_fields.ts";
import { type KeyFields, KeyStore } from "../auth/keys.ts";
import type { KeyRecord } from "../auth/principal.ts";
import { Catalogue } from "../catalogue/store.ts";
import { unmatchedPatterns } from "../catalogue/model.ts";
import { systemClock } from "../clock.ts";
import { type Config, LIMIT_SCOPES, type LimitScope, type WindowLimit } from "../config/types.ts";
import { ConfigError } from "../config/error.ts";
import { loadConfig } from "../config/load.ts";
import { openKv } from "../kv/open.ts";
import { processOutput } from "../log/logger.ts";
import { ValidationError } from "../validation/error.ts";

const USAGE = `Usage: deno task keys <command> [options]

Commands:
  create --name NAME [--models a,b] [--preview] [--force] [LIMITS]
                            Create a key and print it (shown this once only)
  list [--json]             List keys (never the keys themselves)
  show ID [--json]          Show one key
  update ID [--name NAME] [--models a,b|all] [--preview|--no-preview] [--force] [LIMITS]
                            Change a key
  disable ID                Refuse the key (401) until enabled again
  enable ID                 Accept a disabled key again
  revoke ID                 Delete the key for good

LIMITS (per key, overriding limits.key of the config):
  --chat-per-minute N   --chat-per-day N
  --images-per-minute N --images-per-day N
  --other-per-minute N  --other-per-day N
  --tokens-per-minute N --tokens-per-day N   (chat tokens, input + output)
  N is a positive integer or "unlimited"; with update, "default" removes the override.
  --max-concurrent N|unlimited                requests of the key at once
  --budget-per-day X    --budget-per-month X  spend in the models' pricing units, or "none"

Options: --config PATH (or SWITCHYARD_CONFIG) names the config file; SWITCHYARD_KV overrides
its kv.path. --models takes model ids or globs with *, comma-separated; one that matches no
model in the catalogue or the config, or an empty list, is refused unless --force is given.
`;

/** Where the CLI writes, and what it reads from the environment. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env(name: string): string | undefined;
}

class UsageError extends Error {}
class Failure extends Error {}

/** A limit flag's place: a window of a scope's limits. */
interface LimitField {
  scope: LimitScope;
  field: keyof WindowLimit;
}

/** The limit flags, each a window of a scope's limits. */
const LIMIT_FIELDS = new Map<string, LimitField>([
  ...LIMIT_SCOPES.flatMap((scope): [string, LimitField][] => [
    [`${scope}-per-minute`, { scope, field: "per_minute" }],
    [`${scope}-per-day`, { scope, field: "per_day" }],
  ]),
  ["tokens-per-minute", { scope: "chat", field: "tokens_per_minute" }],
  ["tokens-per-day", { scope: "chat", field: "tokens_per_day" }],
]);
const LIMIT_FLAGS = [...LIMIT_FIELDS.keys()];
/** The flags of a key's budget (currency units) and concurrency cap. */
const BUDGET_FLAGS = ["budget-per-day", "budget-per-month"] as const;
const KEY_FLAGS = [...LIMIT_FLAGS, ...BUDGET_FLAGS, "max-concurrent"];
const VALUE_FLAGS = new Set(["name", "models", "config", ...KEY_FLAGS]);
const SWITCH_FLAGS = new Set(["preview", "no-preview", "json", "help", "force"]);

interface Parsed {
  positional: string[];
  flags: Map<string, string | true>;
}

function parseArgs(args: readonly string[]): Parsed {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith("--")) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (SWITCH_FLAGS.has(name)) {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`);
      flags.set(name, true);
    } else if (VALUE_FLAGS.has(name)) {
      const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
      if (value === undefined || (eq === -1 && value.startsWith("--"))) {
        throw new UsageError(`--${name} needs a value`);
      }
      flags.set(name, value);
    } else {
      throw new UsageError(`unknown option --${name}`);
    }
  }
  return { positional, flags };
}

/** Only these flags may be given to a command (besides --config and --help). */
function allowOnly(parsed: Parsed, command: string, allowed: readonly string[]): void {
  for (const name of parsed.flags.keys()) {
    if (name !== "config" && name !== "help" && !allowed.includes(name)) {
      throw new UsageError(`${command} does not take --${name}`);
    }
  }
}

function oneId(parsed: Parsed, command: string): string {
  if (parsed.positional.length !== 1) {
    throw new UsageError(`${command} takes one key id (see "deno task keys list")`);
  }
  return parsed.positional[0]!;
}

function stringFlag(parsed: Parsed, name: string): string | undefined {
  const value = parsed.flags.get(name);
  return typeof value === "string" ? value : undefined;
}

function readModelsFlag(value: string): string[] | null {
  if (value === "all" || value === "*") return null;
  return value.split(",").map((s) => s.trim()).filter((s) => s !== "");
}

/** The limit overrides from the flags, applied over `base`; `allowDefault` lets "default"
 * remove an override. */
function readLimitFlags(
  parsed: Parsed,
  base: KeyRecord["limits"],
  allowDefault: boolean,
): KeyRecord["limits"] | undefined {
  let changed = false;
  const limits: KeyRecord["limits"] = structuredClone(base);
  for (const [flag, { scope, field }] of LIMIT_FIELDS) {
    const raw = stringFlag(parsed, flag);
    if (raw === undefined) continue;
    changed = true;
    const own = limits[scope] ?? {};
    if (raw === "default" && allowDefault) {
      delete own[field];
    } else if (raw === "unlimited") {
      own[field] = null;
    } else if (/^[1-9]\d{0,14}$/.test(raw)) {
      own[field] = Number(raw);
    } else {
      throw new UsageError(
        `--${flag}: expected a positive integer or "unlimited"${
          allowDefault ? ' or "default"' : ""
        }, not ${JSON.stringify(raw)}`,
      );
    }
    if (Object.keys(own).length === 0) delete limits[scope];
    else limits[scope] = own;
  }
  return changed ? limits : undefined;
}

/** `max_concurrent` and `budget` from the flags, over the key's `current` budget; "unlimited"
 * (or "none" for a budget) removes a cap. */
function readCapFlags(parsed: Parsed, current: KeyRecord | null): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  const concurrent = stringFlag(parsed, "max-concurrent");
  if (concurrent !== undefined) {
    if (concurrent === "unlimited") raw.max_concurrent = null;
    else if (/^[1-9]\d{0,4}$/.test(concurrent)) raw.max_concurrent = Number(concurrent);
    else {
      throw new UsageError(
        `--max-concurrent: expected a positive integer or "unlimited", not ${
          JSON.stringify(concurrent)
        }`,
      );
    }
  }
  const budget: Record<string, number | null> = { ...(current?.budget ?? {}) };
  let budgetGiven = false;
  for (const flag of BUDGET_FLAGS) {
    const value = stringFlag(parsed, flag);
    if (value === undefined) continue;
    budgetGiven = true;
    const field = flag === "budget-per-day" ? "per_day" : "per_month";
    if (value === "none") budget[field] = null;
    else if (/^\d+(\.\d+)?$/.test(value)) budget[field] = Number(value);
    else {
      throw new UsageError(
        `--${flag}: expected an amount in currency units (like 5 or 12.50) or "none", not ${
          JSON.stringify(value)
        }`,
      );
    }
  }
  if (budgetGiven) raw.budget = budget;
  return raw;
}

function validate<T>(read: () => T): T {
  try {
    return read();
  } catch (e) {
    if (e instanceof ValidationError) throw new UsageError(e.fieldMessage());
    throw e;
  }
}

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

function table(records: KeyRecord[]): string {
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
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd())
    .join("\n") + "\n";
}

/** Refuses an allow-list that lets the key use no model in the catalogue (in KV) or the
 * config (the empty list, or a pattern that matches no model), unless `--force`, which keeps
 * it with a warning. */
async function checkPatterns(
  fields: KeyFields,
  kv: Deno.Kv,
  config: Config,
  parsed: Parsed,
  io: CliIo,
): Promise<void> {
  if (fields.models === undefined || fields.models === null) return;
  const catalogue = await Catalogue.open({ kv, clock: systemClock });
  const ids = [...catalogue.all().map((m) => m.id), ...config.models.map((m) => m.id)];
  catalogue.close();
  const warnings = allowListWarnings(fields.models, ids);
  if (warnings.length === 0) return;
  if (!parsed.flags.has("force")) throw new Failure(refusal(fields.models, ids));
  for (const warning of warnings) io.stderr(`keys: warning: ${warning}\n`);
}

/** Why `--models` is refused without `--force`: it is empty, or names `patterns` of which
 * some match none of `ids`. */
function refusal(patterns: readonly string[], ids: readonly string[]): string {
  if (patterns.length === 0) {
    return "--models: the list is empty, so a key limited to it could use nothing; name " +
      'model ids (or "all"), or pass --force to keep it';
  }
  const unmatched = unmatchedPatterns(patterns, ids);
  const list = unmatched.map((p) => JSON.stringify(p)).join(", ");
  return `--models: ${list} ${unmatched.length === 1 ? "matches" : "match"} no model in the ` +
    "catalogue or the config (a key limited to it could use nothing); check the ids, or " +
    "pass --force to keep them";
}

async function run(args: readonly string[], io: CliIo): Promise<void> {
  const parsed = parseArgs(args);
  const command = parsed.positional.shift();
  if (command === undefined || command === "help" || parsed.flags.has("help")) {
    if (command === undefined && !parsed.flags.has("help")) throw new UsageError("no command");
    io.stdout(USAGE);
    return;
  }
  const commands = ["create", "list", "show", "update", "disable", "enable", "revoke"];
  if (!commands.includes(command)) throw new UsageError(`unknown command ${command}`);

  const config = await loadConfig({ args, env: io.env });
  const kv = await openKv(config.kv.path);
  try {
    const keys = new KeyStore(kv, systemClock);
    const show = (record: KeyRecord) => {
      if (parsed.flags.has("json")) io.stdout(JSON.stringify(keyView(record), null, 2) + "\n");
      else io.stdout(table([record]));
    };
    const found = (record: KeyRecord | null, id: string): KeyRecord => {
      if (record === null) throw new Failure(`no API key with id ${id}`);
      return record;
    };
    switch (command) {
      case "create": {
        allowOnly(parsed, command, ["name", "models", "preview", "force", ...KEY_FLAGS]);
        if (parsed.positional.length > 0) {
          throw new UsageError(`create takes no arguments besides options`);
        }
        const name = stringFlag(parsed, "name");
        if (name === undefined) throw new UsageError("create needs --name NAME");
        const raw: Record<string, unknown> = { name };
        const models = stringFlag(parsed, "models");
        if (models !== undefined) raw.models = readModelsFlag(models);
        if (parsed.flags.has("preview")) raw.preview = true;
        const limits = readLimitFlags(parsed, {}, false);
        if (limits !== undefined) raw.limits = limits;
        Object.assign(raw, readCapFlags(parsed, null));
        const fields = validate(() => readKeyFields(raw, "create"));
        await checkPatterns(fields, kv, config, parsed, io);
        const { key, record } = await keys.create(fields);
        io.stdout(key + "\n");
        io.stderr(
          `Created API key ${record.id} (${JSON.stringify(record.name)}). ` +
            "This is the only time the key is shown: store it now.\n",
        );
        return;
      }
      case "list": {
        allowOnly(parsed, command, ["json"]);
        if (parsed.positional.length > 0) throw new UsageError("list takes no arguments");
        const records = await keys.list();
        if (parsed.flags.has("json")) {
          io.stdout(JSON.stringify(records.map(keyView), null, 2) + "\n");
        } else if (records.length === 0) {
          io.stderr('No API keys. Create one with "deno task keys create --name NAME".\n');
        } else {
          io.stdout(table(records));
        }
        return;
      }
      case "show": {
        allowOnly(parsed, command, ["json"]);
        const id = oneId(parsed, command);
        show(found(await keys.get(id), id));
        return;
      }
      case "update": {
        allowOnly(parsed, command, [
          "name",
          "models",
          "preview",
          "no-preview",
          "force",
          ...KEY_FLAGS,
        ]);
        const id = oneId(parsed, command);
        const current = found(await keys.get(id), id);
        const raw: Record<string, unknown> = {};
        const name = stringFlag(parsed, "name");
        if (name !== undefined) raw.name = name;
        const models = stringFlag(parsed, "models");
        if (models !== undefined) raw.models = readModelsFlag(models);
        if (parsed.flags.has("preview") && parsed.flags.has("no-preview")) {
          throw new UsageError("give --preview or --no-preview, not both");
        }
        if (parsed.flags.has("preview")) raw.preview = true;
        if (parsed.flags.has("no-preview")) raw.preview = false;
        const limits = readLimitFlags(parsed, current.limits, true);
        if (limits !== undefined) raw.limits = limits;
        Object.assign(raw, readCapFlags(parsed, current));
        if (Object.keys(raw).length === 0) {
          throw new UsageError("update needs at least one option to change");
        }
        const fields: KeyFields = validate(() => readKeyFields(raw, "update"));
        await checkPatterns(fields, kv, config, parsed, io);
        show(found(await keys.update(id, fields), id));
        return;
      }
      case "disable":
      case "enable": {
        allowOnly(parsed, command, []);
        const id = oneId(parsed, command);
        found(await keys.update(id, { disabled: command === "disable" }), id);
        io.stderr(`API key ${id} ${command}d.\n`);
        return;
      }
      case "revoke": {
        allowOnly(parsed, command, []);
        const id = oneId(parsed, command);
        if (!(await keys.revoke(id))) throw new Failure(`no API key with id ${id}`);
        io.stderr(`API key ${id} revoked.\n`);
        return;
      }
    }
  } finally {
    kv.close();
  }
}

/** Runs the CLI; returns the exit code (0 done, 1 failed, 2 usage error). */
export async function runKeysCli(args: readonly string[], io: CliIo): Promise<number> {
  try {
    await run(args, io);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`keys: ${e.message}\n\n${USAGE}`);
      return 2;
    }
    if (e instanceof Failure || e instanceof ConfigError) {
      io.stderr(`keys: ${e.message}\n`);
      return 1;
    }
    io.stderr(`keys: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}

if (import.meta.main) {
  const code = await runKeysCli(Deno.args, {
    stdout: processOutput.stdout,
    stderr: processOutput.stderr,
    env: (name) => Deno.env.get(name),
  });
  Deno.exit(code);
}
