import assert from "node:assert/strict";
import { findPii, highEntropy, ibanValid, ipv6Valid, luhnValid } from "../../src/guardrails/pii.ts";
import type { PiiKind } from "../../src/config/types.ts";

/** The kinds and texts found in `text`. */
function found(text: string, kinds?: PiiKind[]): [string, string][] {
  return findPii(text, kinds ? new Set(kinds) : undefined).map((f) => [
    f.kind,
    text.slice(f.start, f.end),
  ]);
}

Deno.test("pii: e-mail addresses, and not what merely has an @", () => {
  assert.deepEqual(found("write to jane.doe+x@mail.example.co.uk today"), [
    ["email", "jane.doe+x@mail.example.co.uk"],
  ]);
  assert.deepEqual(found("@handle, user@localhost, a @ b.com"), []);
});

Deno.test("pii: payment card numbers pass the Luhn check; other digit runs are not cards", () => {
  assert.deepEqual(found("card 4111 1111 1111 1111 exp"), [["card", "4111 1111 1111 1111"]]);
  assert.deepEqual(found("card 5500-0000-0000-0004."), [["card", "5500-0000-0000-0004"]]);
  assert.deepEqual(found("order 4111111111111112 shipped"), []);
  assert.deepEqual(found("id 41111111111111110000000"), []);
  assert.equal(luhnValid("4111111111111111"), true);
  assert.equal(luhnValid("4111111111111112"), false);
  assert.equal(luhnValid("0000"), false);
});

Deno.test("pii: IBANs pass mod-97 and the country's length", () => {
  assert.deepEqual(found("pay GB82 WEST 1234 5698 7654 32 now"), [
    ["iban", "GB82 WEST 1234 5698 7654 32"],
  ]);
  assert.deepEqual(found("IBAN DE89370400440532013000."), [["iban", "DE89370400440532013000"]]);
  assert.equal(ibanValid("GB82WEST12345698765433"), false);
  assert.equal(ibanValid("DE8937040044053201300"), false);
  assert.deepEqual(found("part number AB12 CDEF GHIJ KLMN"), []);
});

Deno.test("pii: US social security numbers, not impossible ones", () => {
  assert.deepEqual(found("SSN 123-45-6789."), [["ssn", "123-45-6789"]]);
  assert.deepEqual(found("000-12-3456 666-12-3456 123-00-4567 123-45-0000 123-45 6789"), []);
});

Deno.test("pii: phone numbers, not dates, versions or amounts", () => {
  assert.deepEqual(found("call +1 415 555 2671 or (415) 555-2671 or +44 20 7946 0958"), [
    ["phone", "+1 415 555 2671"],
    ["phone", "(415) 555-2671"],
    ["phone", "+44 20 7946 0958"],
  ]);
  assert.deepEqual(found("on 2024-01-15, v1.2.3, $1,234,567 and 12345678"), []);
});

Deno.test("pii: IP addresses v4 and v6, not out-of-range numbers or times", () => {
  assert.deepEqual(found("from 192.168.1.10 and 2001:db8::8a2e:370:7334 and ::1"), [
    ["ip", "192.168.1.10"],
    ["ip", "2001:db8::8a2e:370:7334"],
    ["ip", "::1"],
  ]);
  assert.deepEqual(found("999.1.1.1, 1.2.3, at 12:30:45, std::vector"), []);
  assert.equal(ipv6Valid("fe80::1"), true);
  assert.equal(ipv6Valid("1:2:3"), false);
});

Deno.test("pii: secrets by providers' prefixes and by entropy, not hashes, UUIDs or words", () => {
  const keys = [
    "sk-proj-Ab3dEf6hIj9kLmN0pQrStUvWxYz12345",
    "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "xoxb-1234567890-abcdefghij",
    "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6q",
    "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LmNbVcXz",
  ];
  for (const key of keys) assert.deepEqual(found(`key: ${key} end`), [["secret", key]], key);
  assert.deepEqual(
    found(
      "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 id 123e4567-e89b-12d3-a456-426614174000 " +
        "path /usr/lib/x86_64-linux-gnu/libssl.so and task-ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    ),
    [],
  );
  assert.equal(highEntropy("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaAAAA1111"), false);
});

Deno.test("pii: only the kinds asked for, and overlapping findings once", () => {
  const text = "mail jane@example.com from 10.0.0.1";
  assert.deepEqual(found(text, ["ip"]), [["ip", "10.0.0.1"]]);
  assert.deepEqual(found(text).map(([k]) => k), ["email", "ip"]);
});

Deno.test("pii: a long crafted text takes linear time (no catastrophic backtracking)", () => {
  for (
    const text of [
      "a".repeat(50_000) + "@",
      "1 ".repeat(25_000),
      "sk-" + "a-".repeat(25_000),
      ":".repeat(50_000),
      "a.".repeat(25_000),
    ]
  ) {
    const t0 = performance.now();
    findPii(text);
    // Not a timing assertion of speed: a backtracking pattern takes minutes here, not ms.
    assert.ok(performance.now() - t0 < 5_000);
  }
});
