/**
 * The server's command line: `main.ts [--config PATH] [--port N] [--hostname HOST]
 * [--version] [--help]`. An unknown option or a bad value is a {@link UsageError}, so that a
 * misspelt flag is refused rather than ignored.
 */
import { closestName } from "../config/suggest.ts";
import { quote } from "../quote.ts";

/** What the command line asks for. */
export interface ServeArgs {
  config?: string;
  port?: number;
  hostname?: string;
  help: boolean;
  version: boolean;
}

/** A command line that cannot be followed; the message names the option. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** The server's usage text. */
export const SERVE_USAGE = `Usage: deno task start [options]   (or: switchyard [options])

Options:
  --config PATH      The config file (default: SWITCHYARD_CONFIG, else switchyard.json)
  --port N           Listen on port N (overrides server.port and PORT)
  --hostname HOST    Listen on HOST (overrides server.hostname)
  --version          Print the version and exit
  --help             Print this help and exit
`;

const VALUE_OPTIONS = ["config", "port", "hostname"] as const;
const SWITCH_OPTIONS = ["help", "version"] as const;
const OPTIONS: readonly string[] = [...VALUE_OPTIONS, ...SWITCH_OPTIONS];

/** Reads the server's arguments. */
export function parseServeArgs(args: readonly string[]): ServeArgs {
  const out: ServeArgs = { help: false, version: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith("--")) throw new UsageError(`unexpected argument ${quote(arg)}`);
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if ((SWITCH_OPTIONS as readonly string[]).includes(name)) {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`);
      out[name as typeof SWITCH_OPTIONS[number]] = true;
      continue;
    }
    if (!(VALUE_OPTIONS as readonly string[]).includes(name)) {
      const near = closestName(name, OPTIONS);
      throw new UsageError(
        `unknown option --${name}${near === null ? "" : ` (did you mean --${near}?)`}`,
      );
    }
    const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined || value === "" || (eq === -1 && value.startsWith("--"))) {
      throw new UsageError(`--${name} needs a value`);
    }
    if (name === "port") out.port = readPort(value);
    else if (name === "hostname") out.hostname = value;
    else out.config = value;
  }
  return out;
}

function readPort(value: string): number {
  const n = /^\d{1,5}$/.test(value) ? Number(value) : NaN;
  if (!(n >= 0 && n <= 65535)) {
    throw new UsageError(`--port must be a port number 0\u201365535, not ${quote(value)}`);
  }
  return n;
}
