import { UsageError } from "../args.ts";
import type { CliIo } from "./io.ts";

/**
 * Runs a CLI's `run` and returns its exit code: 0 when done; 2 for a {@link UsageError},
 * printed with the `usage` text; 1 for any other failure, printed as one line. Each message
 * starts with the CLI's `name`.
 */
export async function runCli(
  name: string,
  usage: string,
  io: CliIo,
  run: () => Promise<void>,
): Promise<number> {
  try {
    await run();
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`${name}: ${e.message}\n\n${usage}`);
      return 2;
    }
    io.stderr(`${name}: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}
