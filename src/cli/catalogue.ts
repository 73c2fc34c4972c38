/**
 * `deno task catalogue ...`: the model catalogue in the KV the server uses (same config:
 * `--config`, `SWITCHYARD_CONFIG`, `SWITCHYARD_KV`), without a running server. Seeding never
 * deletes, so a model removed from the config stays in KV until `prune` removes it on purpose.
 */
import { type ArgSpec, parseCommand, UsageError } from "../args.ts";
import { Catalogue } from "../catalogue/store.ts";
import type { ModelRecord } from "../catalogue/model.ts";
import { systemClock } from "../clock.ts";
import { loadConfig } from "../config/load.ts";
import { openKv } from "../kv/open.ts";
import { type CliIo, processIo } from "./io.ts";
import { runCli } from "./run_cli.ts";
import { formatTable } from "./table.ts";

const USAGE = `Usage: deno task catalogue <command> [options]

Commands:
  list [--json]        List the models in KV, with who owns each (config or admin)
  prune [--dry-run]    Delete the config-owned models that the config no longer lists
                       (models written through the admin API are never pruned)

Options: --config PATH (or SWITCHYARD_CONFIG) names the config file; SWITCHYARD_KV overrides
its kv.path.
`;

/** The flags every command takes. */
const GLOBAL: ArgSpec = { values: ["config"], switches: ["help"] };
/** The commands, each with the flags of its own. */
const COMMANDS: Readonly<Record<string, ArgSpec>> = {
  list: { switches: ["json"] },
  prune: { switches: ["dry-run"] },
  help: {},
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
  return formatTable(rows);
}

async function run(argv: readonly string[], io: CliIo): Promise<void> {
  const args = parseCommand(argv, GLOBAL, COMMANDS);
  const command = args.positional.shift();
  if (args.switches.has("help") || command === "help") return void io.stdout(USAGE);
  if (command === undefined) throw new UsageError("no command");
  if (args.positional.length > 0) throw new UsageError(`${command} takes no arguments`);
  const configPath = args.values.get("config");
  const configArgs = configPath === undefined ? [] : ["--config", configPath];
  const config = await loadConfig({ args: configArgs, env: io.env });
  const listed = new Set(config.models.map((m) => m.id));
  const kv = await openKv(config.kv.path);
  const catalogue = await Catalogue.open({ kv, clock: systemClock });
  try {
    const records = catalogue.all().sort((a, b) => (a.id < b.id ? -1 : 1));
    if (command === "list") {
      io.stdout(
        args.switches.has("json")
          ? JSON.stringify(records, null, 2) + "\n"
          : table(records, listed),
      );
      return;
    }
    const stale = records.filter((r) => r.source === "config" && !listed.has(r.id));
    if (args.switches.has("dry-run")) {
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
export function runCatalogueCli(args: readonly string[], io: CliIo): Promise<number> {
  return runCli("catalogue", USAGE, io, () => run(args, io));
}

if (import.meta.main) Deno.exit(await runCatalogueCli(Deno.args, processIo));
