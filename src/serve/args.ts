/**
 * The server's command line: `main.ts [--config PATH] [--port N] [--hostname HOST]
 * [--version] [--help]`. An unknown option or a bad value is a {@link UsageError}, so that a
 * misspelt flag is refused rather than ignored.
 */
import { integerIn, parseArgs, UsageError } from "../args.ts";
import { quote } from "../quote.ts";

/** What the command line asks for. */
export interface ServeArgs {
  config?: string;
  port?: number;
  hostname?: string;
  help: boolean;
  version: boolean;
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

/** Reads the server's arguments. */
export function parseServeArgs(args: readonly string[]): ServeArgs {
  const parsed = parseArgs(args, {
    values: ["config", "port", "hostname"],
    switches: ["help", "version"],
  });
  const out: ServeArgs = {
    help: parsed.switches.has("help"),
    version: parsed.switches.has("version"),
  };
  const config = parsed.values.get("config");
  if (config !== undefined) out.config = config;
  const port = parsed.values.get("port");
  if (port !== undefined) out.port = readPort(port);
  const hostname = parsed.values.get("hostname");
  if (hostname !== undefined) out.hostname = hostname;
  return out;
}

function readPort(value: string): number {
  const port = integerIn(value, 0, 65535);
  if (port === null) {
    throw new UsageError(`--port must be a port number 0\u201365535, not ${quote(value)}`);
  }
  return port;
}
