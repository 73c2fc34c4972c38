import assert from "node:assert/strict";
import { clientIp } from "../../src/http/client_ip.ts";

const REMOTE: Deno.NetAddr = { transport: "tcp", hostname: "10.0.0.5", port: 40000 };

function ip(header: string | null, hops: number): string {
  const headers: Record<string, string> = header === null ? {} : { "x-forwarded-for": header };
  return clientIp(new Request("http://gw/", { headers }), REMOTE, hops);
}

Deno.test("clientIp: the connection's address unless proxies are trusted", () => {
  assert.equal(ip("203.0.113.9", 0), "10.0.0.5");
  assert.equal(ip(null, 1), "10.0.0.5");
  assert.equal(ip("203.0.113.9", 1), "203.0.113.9");
  assert.equal(ip("198.51.100.1, 203.0.113.9", 1), "203.0.113.9");
  assert.equal(ip("198.51.100.1, 203.0.113.9", 2), "198.51.100.1");
  assert.equal(ip("203.0.113.9", 2), "10.0.0.5", "fewer entries than trusted proxies");
  assert.equal(ip("2001:db8::1", 1), "2001:db8::1");
  assert.equal(ip("[2001:db8::1]", 1), "[2001:db8::1]");
});

Deno.test("clientIp: an X-Forwarded-For entry that is not an IPv4 or IPv6 address is ignored", () => {
  for (
    const garbage of [
      "not-an-ip",
      "",
      "unknown",
      "1.2.3",
      "1.2.3.256",
      "1.2.3.4:80",
      "2001:db8::1::2",
      "x".repeat(5000),
      "203.0.113.9 extra",
      "<script>",
    ]
  ) {
    assert.equal(ip(garbage, 1), "10.0.0.5", JSON.stringify(garbage.slice(0, 40)));
    assert.equal(ip(`203.0.113.9, ${garbage}`, 1), "10.0.0.5", garbage.slice(0, 40));
  }
});
