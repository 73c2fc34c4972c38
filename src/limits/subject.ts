import { ipv6Bytes } from "../http/ip.ts";

/**
 * What an anonymous client's requests count against (DESIGN §8): an IPv4 address as it is; an
 * IPv6 address by its first `prefix` bits (64 by default: one host is usually given a whole
 * /64, and counting its single addresses would give it 2^64 fresh limits); an IPv4-mapped IPv6
 * address (`::ffff:192.0.2.1`) as its IPv4 address. Anything else (a unix socket's "unknown")
 * as it is.
 */
export function ipSubject(ip: string, prefix: number): string {
  if (!ip.includes(":")) return ip;
  const bytes = ipv6Bytes(ip);
  if (bytes === null) return ip;
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return bytes.slice(12).join(".");
  }
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) {
    const bits = Math.max(0, Math.min(16, prefix - i * 8));
    const mask = bits === 0 ? 0 : (0xffff << (16 - bits)) & 0xffff;
    groups.push((((bytes[i]! << 8) | bytes[i + 1]!) & mask).toString(16));
  }
  return `${groups.join(":")}/${prefix}`;
}
