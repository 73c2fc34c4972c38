import { processOutput } from "../log/logger.ts";

/** Where a CLI writes, and what it reads from the environment. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env(name: string): string | undefined;
}

/** The process's own output streams and environment. */
export const processIo: CliIo = {
  stdout: processOutput.stdout,
  stderr: processOutput.stderr,
  env: (name) => Deno.env.get(name),
};
