import assert from "node:assert/strict";
import { ipSubject } from "../../src/limits/subject.ts";

Deno.test("ipSubject: IPv4 as it is; IPv6 by its /64; IPv4-mapped IPv6 as IPv4", () => {
  assert.equal(ipSubject("203.0.113.7", 64), "203.0.113.7");
  const a = ipSubject("2001:db8:1:2:aaaa:bbbb:cccc:dddd", 64);
  assert.equal(a, "2001:db8:1:2:0:0:0:0/64");
  // Every address of the same /64, however written, is the same subject.
  assert.equal(ipSubject("2001:0db8:0001:0002::1", 64), a);
  assert.equal(ipSubject("[2001:db8:1:2::ffff]", 64), a);
  assert.notEqual(ipSubject("2001:db8:1:3::1", 64), a);
  assert.equal(ipSubject("::ffff:192.0.2.1", 64), "192.0.2.1");
  assert.equal(ipSubject("unknown", 64), "unknown");
});

Deno.test("ipSubject: the prefix length is configurable, not only on group boundaries", () => {
  assert.equal(ipSubject("2001:db8:abcd:ef12::1", 48), "2001:db8:abcd:0:0:0:0:0/48");
  assert.equal(ipSubject("2001:db8:abcd:ef12::1", 56), "2001:db8:abcd:ef00:0:0:0:0/56");
  assert.equal(ipSubject("2001:db8::1", 128), "2001:db8:0:0:0:0:0:1/128");
});
