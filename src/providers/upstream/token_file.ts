/**
 * A workload's token mounted as a file (Kubernetes' service account tokens for EKS's IRSA and
 * Pod Identity, AKS's Workload Identity), read again for every use: Kubernetes rotates it.
 */
import { isNotGranted, outsideGrants } from "../../serve/grants.ts";

/** Why a token file gives no token; names the file, never its content. */
export class TokenFileError extends Error {}

/** The token in the file at `path`, trimmed; throws {@link TokenFileError} when there is none
 * (not granted to the start task, missing, unreadable or empty). */
export async function readTokenFile(path: string): Promise<string> {
  let token: string;
  try {
    token = (await Deno.readTextFile(path)).trim();
  } catch (e) {
    throw new TokenFileError(
      isNotGranted(e)
        ? `the token file ${outsideGrants(path, "read")}`
        : `the token file ${path} could not be read (${
          e instanceof Deno.errors.NotFound ? "no such file" : "an error reading it"
        })`,
    );
  }
  if (token === "") throw new TokenFileError(`the token file ${path} is empty`);
  return token;
}
