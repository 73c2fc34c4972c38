import assert from "node:assert/strict";
import { ConfigError } from "../../src/config/error.ts";
import { parseConfig } from "../../src/config/parse.ts";

const CORP = { id: "corp", style: "openai", base_url: "https://llm.corp.example/v1" };

/** The providers of a config of `providers` and one model on the first. */
function providers(...entries: Record<string, unknown>[]) {
  const raw = {
    providers: entries,
    models: [{ id: "m", provider: "corp", chat_completions: true }],
  };
  return parseConfig(raw, "switchyard.json").providers;
}

Deno.test("ca_certs_env: the variable's name is kept; absent or null, there is none", () => {
  assert.equal(providers({ ...CORP, ca_certs_env: "CORP_CA_PEM" })[0]!.ca_certs_env, "CORP_CA_PEM");
  assert.equal(providers(CORP)[0]!.ca_certs_env, null);
  assert.equal(providers({ ...CORP, ca_certs_env: null })[0]!.ca_certs_env, null);
  assert.equal(
    providers({ ...CORP, base_url: "HTTPS://llm.corp.example", ca_certs_env: "_CA1" })[0]!
      .ca_certs_env,
    "_CA1",
  );
});

Deno.test("ca_certs_env: each bad value is a config error naming the field", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    [
      "not a string",
      { ...CORP, ca_certs_env: 1 },
      "switchyard.json: providers[0].ca_certs_env: expected a string or null, but got a number",
    ],
    [
      "empty",
      { ...CORP, ca_certs_env: "" },
      'switchyard.json: providers[0].ca_certs_env: expected an environment variable name: letters, digits and _, not starting with a digit, but got ""',
    ],
    [
      "the certificate itself instead of a variable's name",
      { ...CORP, ca_certs_env: "-----BEGIN CERTIFICATE-----" },
      "switchyard.json: providers[0].ca_certs_env: expected an environment variable name",
    ],
    [
      "a provider whose upstream is not https",
      { ...CORP, base_url: "http://llm.corp.example/v1", ca_certs_env: "CORP_CA" },
      "switchyard.json: providers[0].ca_certs_env: only a provider with an https base_url uses it",
    ],
    [
      "the simulator, which calls no upstream",
      { id: "corp", style: "simulator", ca_certs_env: "CORP_CA" },
      "switchyard.json: providers[0].ca_certs_env: unknown parameter",
    ],
  ];
  for (const [name, entry, expected] of cases) {
    assert.throws(
      () => providers(entry),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError, `${name}: ${e}`);
        assert.ok(
          e.message.startsWith(expected),
          `${name}:\n  got      ${e.message}\n  expected ${expected}…`,
        );
        return true;
      },
    );
  }
});
