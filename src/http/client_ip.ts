/** The client's IP: the connection's address, or with `trustedHops` > 0 the entry of
 * `X-Forwarded-For` appended by the outermost trusted proxy. */
export function clientIp(
  request: Request,
  remote: Deno.Addr | undefined,
  trustedHops: number,
): string {
  const direct = remote && "hostname" in remote ? remote.hostname : "unknown";
  if (trustedHops <= 0) return direct;
  const header = request.headers.get("x-forwarded-for");
  if (!header) return direct;
  const hops = header.split(",").map((s) => s.trim()).filter((s) => s !== "");
  if (hops.length === 0) return direct;
  return hops[Math.max(0, hops.length - trustedHops)]!;
}
