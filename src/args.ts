/**
 * Command lines of the server and the CLIs: flags that take a value (`--name value` or
 * `--name=value`), switches (`--name`), and words. An unknown, repeated or misused flag is a
 * {@link UsageError} that names it, so that a misspelt flag is refused rather than ignored.
 */
import { closestName } from "./config/suggest.ts";
import { quote } from "./quote.ts";

/** A command line that cannot be followed; the message names the flag or the word. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** The flags a command line may hold, by name without the leading `--`. */
export interface ArgSpec {
  /** Flags that take a value: `--name value` or `--name=value`. */
  values?: readonly string[];
  /** Flags that take none. */
  switches?: readonly string[];
  /** Flags of `values` whose value may be empty (`--name=`); the others need one. */
  mayBeEmpty?: readonly string[];
  /** Whether words that are not flags may be given (else the first is refused). */
  positional?: boolean;
}

/** A command line as read by {@link parseArgs} or {@link parseCommand}. */
export interface Args {
  /** The words that are not flags, in order. */
  positional: string[];
  /** The value of each value flag given. */
  values: Map<string, string>;
  /** The switches given. */
  switches: Set<string>;
}

/** Reads `args` by `spec`: a flag `spec` does not name is refused as unknown, with the
 * closest name it does when there is one. */
export function parseArgs(args: readonly string[], spec: ArgSpec): Args {
  return read(args, spec, (name) => {
    const near = closestName(name, [...spec.values ?? [], ...spec.switches ?? []]);
    return new UsageError(
      `unknown option --${name}${near === null ? "" : ` (did you mean --${near}?)`}`,
    );
  });
}

/**
 * Reads `<command> [flags]` where each command takes flags of its own: those of `global`
 * anywhere, and those of `commands[command]`, the command being the first word. A flag the
 * command does not take is refused naming the command; a word that names no command is
 * refused; with no word at all, `args` is read as `global`'s alone.
 */
export function parseCommand(
  args: readonly string[],
  global: ArgSpec,
  commands: Readonly<Record<string, ArgSpec>>,
): Args {
  const specs = [global, ...Object.values(commands)];
  const command = firstWord(args, specs.flatMap((spec) => spec.values ?? []));
  if (command === undefined) return parseArgs(args, global);
  const own = Object.hasOwn(commands, command) ? commands[command]! : null;
  if (own === null) throw new UsageError(`unknown command ${command}`);
  const spec: ArgSpec = {
    values: [...global.values ?? [], ...own.values ?? []],
    switches: [...global.switches ?? [], ...own.switches ?? []],
    mayBeEmpty: [...global.mayBeEmpty ?? [], ...own.mayBeEmpty ?? []],
    positional: true,
  };
  return read(args, spec, (name) => notTaken(command, name));
}

/** Refuses each flag of `args` that `command` does not take: for commands that share one set
 * of flags, read by {@link parseArgs} (where a flag outside the set is unknown). */
export function allowOnly(args: Args, command: string, allowed: readonly string[]): void {
  for (const name of [...args.values.keys(), ...args.switches]) {
    if (!allowed.includes(name)) throw notTaken(command, name);
  }
}

/** `value` as an integer from `min` to `max` written in digits, or `null` when it is not
 * one. */
export function integerIn(value: string, min: number, max: number): number | null {
  if (!/^\d{1,16}$/.test(value)) return null;
  const n = Number(value);
  return n >= min && n <= max ? n : null;
}

/** The refusal of a value that `--flag` does not take: names the flag, what it takes, and
 * what it got. */
export function invalidValue(flag: string, expected: string, value: string): UsageError {
  return new UsageError(`--${flag}: expected ${expected}, not ${quote(value)}`);
}

function notTaken(command: string, name: string): UsageError {
  return new UsageError(`${command} does not take --${name}`);
}

/** The first word of `args` that is neither a flag nor the value of one of `values`. */
function firstWord(args: readonly string[], values: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith("--")) return arg;
    if (values.includes(arg.slice(2))) i++;
  }
  return undefined;
}

function read(
  args: readonly string[],
  spec: ArgSpec,
  unknown: (name: string) => UsageError,
): Args {
  const out: Args = { positional: [], values: new Map(), switches: new Set() };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith("--")) {
      if (!spec.positional) throw new UsageError(`unexpected argument ${quote(arg)}`);
      out.positional.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (out.values.has(name) || out.switches.has(name)) {
      throw new UsageError(`--${name} is given more than once`);
    }
    if (spec.switches?.includes(name)) {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`);
      out.switches.add(name);
    } else if (spec.values?.includes(name)) {
      const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
      if (
        value === undefined || (eq === -1 && value.startsWith("--")) ||
        (value === "" && !spec.mayBeEmpty?.includes(name))
      ) {
        throw new UsageError(`--${name} needs a value`);
      }
      out.values.set(name, value);
    } else {
      throw unknown(name);
    }
  }
  return out;
}
