/**
 * `deno task catalogue ...`: the model catalogue in the KV the server uses (same config:
 * `--config`, `SWITCHYARD_CONFIG`, `SWITCHYARD_KV`), without a running server. Seeding never
 * deletes, so a model removed from the config stays in KV until `prune` removes it on purpose.
 */
import { Catalogue } from "../catalogue/store.ts";
import type { ModelRecord } from "../catalogue/model.ts";
import { systemClock } from "../clock.ts";
import { ConfigError } from "../config/error.ts";
import { loadConfig } from "../config/load.ts";
import { openKv } from "../kv/open.ts";
import { processOutput } from "../log/logger.ts";
import type { CliIo } from "./io.ts";

const USAGE = `Usage: deno task catalogue <command> [options]

Commands:
  list [--json]        List the models in KV, with who owns each (config or admin)
  prune [--dry-run]    Delete the config-owned models that the config no longer lists
                       (models written through the admin API are never pruned)

Options: --config PATH (or SWITCHYARD_CONFIG) names the config file; SWITCHYARD_KV overrides
its kv.path.
`;

class UsageError extends Error {}

const COMMAND_FLAGS: Record<string, readonly string[]> = {
  list: ["json"],
  prune: ["dry-run"],
};

function table(records: ModelRecord[], listed: ReadonlySet<string>): string {
  const rows = [["ID", "PROVIDER", "OWNER", "ENABLED", "IN CONFIG"]];
  for (const r of records) {
    rows.push([
      r.id,
      r.provider,
      r.source,
      r.enabled ? "yes" : "no",
      listed.has(r.id) ? "yes" : "no",
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd())
    .join("\n") + "\n";
}

async function run(args: readonly string[], io: CliIo): Promise<void> {
  const positional: string[] = [];
  const flags = new Set<string>();
  let configArgs: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--config") {
      const next = args[++i];
      if (next === undefined) throw new UsageError("--config needs a value");
      configArgs = ["--config", next];
    } else if (arg.startsWith("--config=")) configArgs = [arg];
    else if (arg.startsWith("--")) flags.add(arg.slice(2));
    else positional.push(arg);
  }
  const command = positional.shift();
  if (flags.has("help") || command === "help") return void io.stdout(USAGE);
  if (command === undefined) throw new UsageError("no command");
  const allowed = COMMAND_FLAGS[command];
  if (allowed === undefined) throw new UsageError(`unknown command ${command}`);
  if (positional.length > 0) throw new UsageError(`${command} takes no arguments`);
  for (const flag of flags) {
    if (!allowed.includes(flag)) throw new UsageError(`${command} does not take --${flag}`);
  }
  const config = await loadConfig({ args: configArgs, env: io.env });
  const listed = new Set(config.models.map((m) => m.id));
  const kv = await openKv(config.kv.path);
  const catalogue = await Catalogue.open({ kv, clock: systemClock });
  try {
    const records = catalogue.all().sort((a, b) => (a.id < b.id ? -1 : 1));
    if (command === "list") {
      io.stdout(
        flags.has("json") ? JSON.stringify(records, null, 2) + "\n" : table(records, listed),
      );
      return;
    }
    const stale = records.filter((r) => r.source === "config" && !listed.has(r.id));
    if (flags.has("dry-run")) {
      io.stdout(stale.map((r) => r.id + "\n").join(""));
      io.stderr(`${stale.length} config-owned models are no longer in the config (dry run).\n`);
      return;
    }
    const deleted = await catalogue.prune(config.models);
    io.stdout(deleted.map((id) => id + "\n").join(""));
    io.stderr(`Pruned ${deleted.length} config-owned models that the config no longer lists.\n`);
  } finally {
    catalogue.close();
    kv.close();
  }
}

/** Runs the CLI; returns the exit code (0 done, 1 failed, 2 usage error). */
export async function runCatalogueCli(args: readonly string[], io: CliIo): Promise<number> {
  try {
    await run(args, io);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`catalogue: ${e.message}\n\n${USAGE}`);
      return 2;
    }
    const message = e instanceof ConfigError || e instanceof Error ? e.message : String(e);
    io.stderr(`catalogue: ${message}\n`);
    return 1;
  }
}

if (import.meta.main) {
  const code = await runCatalogueCli(Deno.args, {
    stdout: processOutput.stdout,
    stderr: processOutput.stderr,
    env: (name) => Deno.env.get(name),
  });
  Deno.exit(code);
}
