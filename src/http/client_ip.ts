import { isIp } from "./ip.ts";

/**
 * The client's IP: the connection's address, or with `trustedHops` > 0 the entry of
 * `X-Forwarded-For` appended by the outermost trusted proxy. The header is not trusted when it
 * has fewer entries than there are trusted proxies (a client can write the header itself, so
 * only entries that our proxies appended count), nor when that entry is not an IP address.
 */
export function clientIp(
  request: Request,
  remote: Deno.Addr | undefined,
  trustedHops: number,
): string {
  const direct = remote && "hostname" in remote ? remote.hostname : "unknown";
  if (trustedHops <= 0) return direct;
  const header = request.headers.get("x-forwarded-for");
  if (!header) return direct;
  const hops = header.split(",");
  if (hops.length < trustedHops) return direct;
  const entry = hops[hops.length - trustedHops]!.trim();
  return isIp(entry) ? entry : direct;
}
