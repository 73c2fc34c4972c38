/**
 * What `deno task start` (and the Dockerfile, the systemd unit and the compiled binary) let the
 * process touch on disk, for the errors that name a path outside it.
 */

/** The start task's `--allow-read` and `--allow-write` paths, relative to the working directory
 * (the code it reads is the image worker's modules, which an error names as such). */
export const READ_GRANTS: readonly string[] = [
  "switchyard.json",
  "data/",
  "the service account tokens EKS and AKS mount",
  "the image worker's modules in src/",
];

/** Where Kubernetes on a cloud mounts a pod's service account token for the cloud's IAM: EKS's
 * for IRSA and for Pod Identity (a `bedrock` provider's role), AKS's for Workload Identity (an
 * `azure` provider's managed identity). The start task may read these files, nothing else of
 * `/var/run` (docs/security.md, Permissions). */
export const CLOUD_TOKEN_FILES: readonly string[] = [
  "/var/run/secrets/eks.amazonaws.com/serviceaccount/token",
  "/var/run/secrets/pods.eks.amazonaws.com/serviceaccount/eks-pod-identity-token",
  "/var/run/secrets/azure/tokens/azure-identity-token",
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
