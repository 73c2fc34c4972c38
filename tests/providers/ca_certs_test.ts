import assert from "node:assert/strict";
import { ConfigError } from "../../src/config/error.ts";
import { parseConfig } from "../../src/config/parse.ts";
import type { ProviderConfig } from "../../src/config/types.ts";
import { providerCaCerts } from "../../src/providers/ca_certs.ts";
import { testCerts } from "../http/client/tls_certs.ts";

/** A provider "corp" whose `ca_certs_env` is `name`. */
function corp(name: string | null): ProviderConfig {
  const provider = { id: "corp", style: "openai", ca_certs_env: name };
  const raw = { providers: [provider], models: [{ id: "m", provider: "corp", moderation: true }] };
  return parseConfig(raw, "switchyard.json").providers[0]!;
}

const vars = (values: Record<string, string>) => (name: string) => values[name];

Deno.test("providerCaCerts: none without ca_certs_env, the variable not even read", () => {
  const read: string[] = [];
  assert.equal(providerCaCerts(corp(null), (name) => void read.push(name)), null);
  assert.deepEqual(read, []);
});

Deno.test("providerCaCerts: each certificate of the variable, text around them left out", async () => {
  const { ca, cert } = await testCerts();
  const bundle = `# Corp root\n${ca}\n# Corp intermediate\r\n${cert.replaceAll("\n", "\r\n")}`;
  const certs = providerCaCerts(corp("CORP_CA"), vars({ CORP_CA: bundle }));
  assert.deepEqual(certs, [ca.trim(), cert.trim().replaceAll("\n", "\r\n")]);
});

Deno.test("providerCaCerts: a variable unset, empty, without a certificate or with a broken one is a ConfigError naming the provider, the field and the variable", async () => {
  const { ca, key } = await testCerts();
  const body = ca.split("\n").slice(1, -2).join("\n");
  const broken = `-----BEGIN CERTIFICATE-----\n${body.slice(0, 40)}\n-----END CERTIFICATE-----\n`;
  const cases: [string, Record<string, string>, RegExp][] = [
    ["unset", {}, /, which is not set;/],
    ["empty", { CORP_CA: " \n" }, /, which is empty;/],
    ["a key, not a certificate", { CORP_CA: key }, /, which holds no -----BEGIN CERTIFICATE-----/],
    ["a certificate cut short", { CORP_CA: broken }, /, whose certificates cannot be read \(/],
  ];
  for (const [name, values, reason] of cases) {
    assert.throws(() => providerCaCerts(corp("CORP_CA"), vars(values)), (e: unknown) => {
      assert.ok(e instanceof ConfigError, `${name}: ${e}`);
      assert.match(e.message, /^provider "corp": ca_certs_env names CORP_CA, /, name);
      assert.match(e.message, reason, name);
      assert.match(e.message, /it must hold the PEM certificate\(s\)/, name);
      return true;
    });
  }
});
