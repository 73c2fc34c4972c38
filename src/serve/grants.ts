/**
 * What `deno task start` (and the Dockerfile, the systemd unit and the compiled binary) let the
 * process touch on disk, for the errors that name a path outside it.
 */

/** The start task's `--allow-read` and `--allow-write` paths, relative to the working directory
 * (the code it reads is the image worker's modules, which an error names as such). */
export const READ_GRANTS: readonly string[] = [
  "switchyard.json",
  "data/",
  "EKS's two service account token files",
  "the image worker's modules in src/",
];
export const WRITE_GRANTS: readonly string[] = ["data/"];

/** Whether `error` is Deno refusing an operation that the permissions do not grant. */
export function isNotGranted(error: unknown): boolean {
  return error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied &&
      /--allow-|access to/.test(error.message);
}

/** Why `path` cannot be used under the shipped permissions, and the two ways out. */
export function outsideGrants(path: string, access: "read" | "read and write"): string {
  const granted = access === "read" ? READ_GRANTS : WRITE_GRANTS;
  const flags = access === "read"
    ? `--allow-read=${path}`
    : `--allow-read=${path} --allow-write=${path}`;
  return `${path} is outside what deno task start lets Switchyard ${access} (${
    granted.join(", ")
  }; docs/security.md, Permissions): put it under data/, or add ${flags} to the deno command`;
}
