/** IP address text: parsing to bytes, for checking client-supplied addresses. */

/** The 4 bytes of a dotted IPv4 address, or `null` if `text` is not one. */
export function ipv4Bytes(text: string): number[] | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const bytes: number[] = [];
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    bytes.push(n);
  }
  return bytes;
}

/** The 16 bytes of an IPv6 address (brackets and a zone allowed, a trailing dotted IPv4 part
 * too), or `null` if `text` is not one. */
export function ipv6Bytes(text: string): number[] | null {
  if (text.length > 64) return null;
  const address = text.replace(/^\[(.*)\]$/, "$1").replace(/%[^%]*$/, "");
  const halves = address.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] === "" ? [] : halves[0]!.split(":");
  const tail = halves.length === 1 || halves[1] === "" ? [] : halves[1]!.split(":");
  const groups = [...head, ...tail];
  let v4: number[] | null = null;
  if (groups.length > 0 && groups[groups.length - 1]!.includes(".")) {
    v4 = ipv4Bytes(groups[groups.length - 1]!);
    if (!v4) return null;
    (tail.length > 0 ? tail : head).pop();
  }
  const toBytes = (list: string[]): number[] | null => {
    const out: number[] = [];
    for (const g of list) {
      if (!/^[0-9a-f]{1,4}$/i.test(g)) return null;
      const n = parseInt(g, 16);
      out.push(n >> 8, n & 0xff);
    }
    return out;
  };
  const headBytes = toBytes(head);
  const tailBytes = toBytes(tail);
  if (!headBytes || !tailBytes) return null;
  if (v4) tailBytes.push(...v4);
  const missing = 16 - headBytes.length - tailBytes.length;
  if (halves.length === 1 ? missing !== 0 : missing < 2) return null;
  return [...headBytes, ...new Array<number>(missing).fill(0), ...tailBytes];
}

/** Whether `text` is an IPv4 or IPv6 address. */
export function isIp(text: string): boolean {
  return ipv4Bytes(text) !== null || ipv6Bytes(text) !== null;
}
