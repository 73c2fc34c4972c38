/**
 * `deno task keys ...`: creates, lists, changes and revokes API keys directly in the KV that
 * the server uses (same config: `--config`, `SWITCHYARD_CONFIG`, `SWITCHYARD_KV`), without a
 * running server.
 */
import { allowOnly, type Args, type ArgSpec, parseArgs, UsageError } from "../args.ts";
import { keyView } from "../auth/key_fields.ts";
import { KeyStore } from "../auth/keys.ts";
import type { KeyRecord } from "../auth/principal.ts";
import { systemClock } from "../clock.ts";
import type { Config } from "../config/types.ts";
import { loadConfig } from "../config/load.ts";
import { openKv } from "../kv/open.ts";
import { type CliIo, processIo } from "./io.ts";
import { fieldsToCreate, fieldsToUpdate, LIMIT_FLAGS } from "./key_flags.ts";
import { checkKeyModels } from "./key_models.ts";
import { keyTable } from "./key_table.ts";
import { runCli } from "./run_cli.ts";

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
  --cache on|off|default                      the response cache for the key's calls (docs/caching.md)
  --guardrails JSON|none                      the key's guardrails, a JSON array (docs/guardrails.md)

Options: --config PATH (or SWITCHYARD_CONFIG) names the config file; SWITCHYARD_KV overrides
its kv.path. --models takes model ids or globs with *, comma-separated; one that matches no
model in the catalogue or the config, or an empty list, is refused unless --force is given.
`;

/** The flags of every command; each command takes some of them (see {@link COMMANDS}). */
const ARGS: ArgSpec = {
  values: ["name", "models", "config", ...LIMIT_FLAGS],
  switches: ["preview", "no-preview", "json", "help", "force"],
  mayBeEmpty: ["models"],
  positional: true,
};

/** What a command works on. */
interface Session {
  args: Args;
  io: CliIo;
  config: Config;
  kv: Deno.Kv;
  keys: KeyStore;
}

/** A command: the flags it takes besides `--config`, and what it does. */
interface Command {
  flags: readonly string[];
  run(session: Session): Promise<void>;
}

const COMMANDS: Readonly<Record<string, Command>> = {
  create: {
    flags: ["name", "models", "preview", "force", ...LIMIT_FLAGS],
    async run({ args, io, keys, kv, config }) {
      if (args.positional.length > 0) {
        throw new UsageError("create takes no arguments besides options");
      }
      const fields = fieldsToCreate(args);
      await checkModels(fields.models, { args, io, kv, config });
      const { key, record } = await keys.create(fields);
      io.stdout(key + "\n");
      io.stderr(
        `Created API key ${record.id} (${JSON.stringify(record.name)}). ` +
          "This is the only time the key is shown: store it now.\n",
      );
    },
  },
  list: {
    flags: ["json"],
    async run({ args, io, keys }) {
      if (args.positional.length > 0) throw new UsageError("list takes no arguments");
      const records = await keys.list();
      if (args.switches.has("json")) {
        io.stdout(JSON.stringify(records.map(keyView), null, 2) + "\n");
      } else if (records.length === 0) {
        io.stderr('No API keys. Create one with "deno task keys create --name NAME".\n');
      } else {
        io.stdout(keyTable(records));
      }
    },
  },
  show: {
    flags: ["json"],
    async run({ args, io, keys }) {
      const id = oneId(args, "show");
      show(found(await keys.get(id), id), args, io);
    },
  },
  update: {
    flags: ["name", "models", "preview", "no-preview", "force", ...LIMIT_FLAGS],
    async run({ args, io, keys, kv, config }) {
      const id = oneId(args, "update");
      const fields = fieldsToUpdate(args, found(await keys.get(id), id));
      await checkModels(fields.models, { args, io, kv, config });
      show(found(await keys.update(id, fields), id), args, io);
    },
  },
  disable: { flags: [], run: (session) => setDisabled(session, "disable") },
  enable: { flags: [], run: (session) => setDisabled(session, "enable") },
  revoke: {
    flags: [],
    async run({ args, io, keys }) {
      const id = oneId(args, "revoke");
      if (!(await keys.revoke(id))) throw new Error(`no API key with id ${id}`);
      io.stderr(`API key ${id} revoked.\n`);
    },
  },
};

async function setDisabled({ args, io, keys }: Session, command: "disable" | "enable") {
  const id = oneId(args, command);
  found(await keys.update(id, { disabled: command === "disable" }), id);
  io.stderr(`API key ${id} ${command}d.\n`);
}

/** The key id, the one word after `command`. */
function oneId(args: Args, command: string): string {
  if (args.positional.length !== 1) {
    throw new UsageError(`${command} takes one key id (see "deno task keys list")`);
  }
  return args.positional[0]!;
}

function found(record: KeyRecord | null, id: string): KeyRecord {
  if (record === null) throw new Error(`no API key with id ${id}`);
  return record;
}

function show(record: KeyRecord, args: Args, io: CliIo): void {
  if (args.switches.has("json")) io.stdout(JSON.stringify(keyView(record), null, 2) + "\n");
  else io.stdout(keyTable([record]));
}

/** Refuses an allow-list that lets the key use no model, unless `--force`. */
function checkModels(
  models: readonly string[] | null | undefined,
  { args, io, kv, config }: Pick<Session, "args" | "io" | "kv" | "config">,
): Promise<void> {
  if (models === undefined) return Promise.resolve();
  return checkKeyModels(models, {
    kv,
    config,
    clock: systemClock,
    force: args.switches.has("force"),
    warn: (message) => io.stderr(`keys: warning: ${message}\n`),
  });
}

async function run(argv: readonly string[], io: CliIo): Promise<void> {
  const args = parseArgs(argv, ARGS);
  const command = args.positional.shift();
  if (command === undefined || command === "help" || args.switches.has("help")) {
    if (command === undefined && !args.switches.has("help")) throw new UsageError("no command");
    io.stdout(USAGE);
    return;
  }
  const chosen = Object.hasOwn(COMMANDS, command) ? COMMANDS[command]! : null;
  if (chosen === null) throw new UsageError(`unknown command ${command}`);
  allowOnly(args, command, ["config", ...chosen.flags]);
  const configPath = args.values.get("config");
  const config = await loadConfig({
    args: configPath === undefined ? [] : ["--config", configPath],
    env: io.env,
  });
  const kv = await openKv(config.kv.path);
  try {
    await chosen.run({ args, io, config, kv, keys: new KeyStore(kv, systemClock) });
  } finally {
    kv.close();
  }
}

/** Runs the CLI; returns the exit code (0 done, 1 failed, 2 usage error). */
export function runKeysCli(args: readonly string[], io: CliIo): Promise<number> {
  return runCli("keys", USAGE, io, () => run(args, io));
}

if (import.meta.main) Deno.exit(await runKeysCli(Deno.args, processIo));
