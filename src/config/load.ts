/** Where the config is read from (a file named by flags or env, or env alone), and the
 * environment's overrides. */
import { quote } from "../quote.ts";
import { isNotGranted, outsideGrants } from "../serve/grants.ts";
import { ConfigError } from "./error.ts";
import { parseConfig } from "./parse.ts";
import type { Config } from "./types.ts";

/** Where the config comes from and what the environment overrides. */
export interface ConfigSource {
  args: readonly string[];
  env: (name: string) => string | undefined;
}

/** The config path named by `--config PATH`, `--config=PATH` or `SWITCHYARD_CONFIG`. */
export function configPath({ args, env }: ConfigSource): string {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--config") {
      const next = args[i + 1];
      if (!next) throw new ConfigError("--config needs a file path");
      return next;
    }
    if (arg.startsWith("--config=")) return arg.slice("--config=".length);
  }
  return env("SWITCHYARD_CONFIG") ?? "switchyard.json";
}

/** Reads, parses and validates the config file (or, with no `--config`, the document in
 * `SWITCHYARD_CONFIG_JSON` when set: env-only config, as on Deno Deploy), then applies `PORT`
 * and `SWITCHYARD_KV`. */
export async function loadConfig(source: ConfigSource): Promise<Config> {
  const inline = source.env("SWITCHYARD_CONFIG_JSON");
  const flagged = source.args.some((arg) => arg === "--config" || arg.startsWith("--config="));
  if (inline !== undefined && inline !== "" && !flagged) {
    return applyEnv(parseConfigText(inline, "SWITCHYARD_CONFIG_JSON"), source.env);
  }
  const path = configPath(source);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    const reason = e instanceof Deno.errors.NotFound
      ? "file not found"
      : isNotGranted(e)
      ? outsideGrants(path, "read")
      : e instanceof Deno.errors.PermissionDenied
      ? "permission denied"
      : e instanceof Deno.errors.IsADirectory
      ? "it is a directory, not a file"
      : e instanceof Error
      ? e.message
      : String(e);
    throw new ConfigError(`${path}: cannot read config: ${reason}`);
  }
  return applyEnv(parseConfigText(text, path), source.env, path);
}

/** Parses and validates a config document's text; `source` names it in errors. */
function parseConfigText(text: string, source: string): Config {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`${source}: invalid JSON: ${(e as Error).message}`);
  }
  return parseConfig(raw, source);
}

/** Applies the environment overrides `PORT` and `SWITCHYARD_KV`. */
export function applyEnv(
  config: Config,
  env: (name: string) => string | undefined,
  source = "environment",
): Config {
  const port = env("PORT");
  if (port !== undefined && port !== "") {
    const n = Number(port);
    if (!Number.isInteger(n) || n < 0 || n > 65535) {
      throw new ConfigError(
        `${source}: PORT: must be a port number 0\u201365535, not ${quote(port)}`,
      );
    }
    config.server.port = n;
  }
  const kv = env("SWITCHYARD_KV");
  if (kv !== undefined && kv !== "") config.kv.path = kv;
  return config;
}
