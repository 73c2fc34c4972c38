/**
 * A provider's own root certificates (`ca_certs_env`) over real TLS: an upstream whose
 * certificate a private CA signed answers through Switchyard's own HTTP client and through
 * fetch (`SWITCHYARD_HTTP_CLIENT=fetch`) when the provider names that CA's variable; a provider
 * without it gets a clear 502, also when the other one's connection to the same upstream is
 * idle in a pool; and a variable without certificates stops the start.
 */
import assert from "node:assert/strict";
import { createApp } from "../src/app.ts";
import { ConfigError } from "../src/config/error.ts";
import type { Config } from "../src/config/types.ts";
import { postChat } from "./support/client.ts";
import { startFakeOpenAI } from "./support/fake_openai.ts";
import { hasColourOrStack, simConfig, spawnSwitchyard, tempConfig } from "./support/process.ts";
import { startServer, testConfig } from "./support/server.ts";
import { testCerts } from "./http/client/tls_certs.ts";

/** The two upstream clients, and the environment that picks each. */
const CLIENTS: [string, Record<string, string>][] = [
  ["Switchyard's own client", {}],
  ["fetch", { SWITCHYARD_HTTP_CLIENT: "fetch" }],
];

const HELLO = [{ role: "user", content: "Hello there, how are you today?" }];

/** Providers "corp" (with `ca_certs_env: "CORP_CA"`) and "plain" (without), both calling the
 * upstream at `url` over https, with a chat model each. */
function tlsConfig(url: string): Config {
  return testConfig((raw) => {
    const provider = {
      style: "openai",
      base_url: `${url}/v1`,
      api_key_env: "UP_KEY",
      max_retries: 0,
      timeout_ms: 10_000,
    };
    (raw.providers as unknown[]).push(
      { ...provider, id: "corp", ca_certs_env: "CORP_CA" },
      { ...provider, id: "plain" },
    );
    (raw.models as unknown[]).push(
      { id: "corp-chat", provider: "corp", upstream_model: "gpt-up", chat_completions: true },
      { id: "plain-chat", provider: "plain", upstream_model: "gpt-up", chat_completions: true },
    );
  });
}

for (const [client, clientEnv] of CLIENTS) {
  Deno.test(`ca_certs_env through ${client}: the provider with the CA is answered, the one without gets a 502 naming it`, async () => {
    const { ca, cert, key } = await testCerts();
    await using upstream = startFakeOpenAI({ tls: { cert, key } });
    const env: Record<string, string> = { ...clientEnv, UP_KEY: upstream.apiKey, CORP_CA: ca };
    await using server = await startServer({
      config: tlsConfig(upstream.url),
      env: (name) => env[name],
    });

    const answered = await postChat(server, { model: "corp-chat", messages: HELLO });
    assert.equal(answered.status, 200, await answered.clone().text());
    const completion = await answered.json();
    assert.equal(completion.object, "chat.completion");
    assert.ok(completion.choices[0].message.content.length > 0);

    const streamed = await postChat(server, { model: "corp-chat", messages: HELLO, stream: true });
    assert.equal(streamed.status, 200);
    assert.match(await streamed.text(), /data: \[DONE\]\n\n$/);
    assert.equal(upstream.received.length, 2);
    assert.deepEqual(upstream.violations, []);

    // The same upstream for a provider without the CA: corp's kept-alive connection to it must
    // not serve plain's call (each trust has its own pool).
    const refused = await postChat(server, { model: "plain-chat", messages: HELLO });
    assert.equal(refused.status, 502);
    assert.deepEqual((await refused.json()).error, {
      message: 'Could not reach the upstream provider "plain".',
      type: "upstream_error",
      param: null,
      code: "upstream_error",
    });
    assert.equal(upstream.received.length, 2, "no request of plain's reached the upstream");
    assert.match(server.output.err, /could not connect: .*(certificate|UnknownIssuer)/i);
    assert.ok(!hasColourOrStack(server.output.err), server.output.err);
  });
}

Deno.test("ca_certs_env without certificates stops createApp with a ConfigError, leaving nothing open", async () => {
  const { ca } = await testCerts();
  await using _upstream = startFakeOpenAI();
  const config = testConfig((raw) => {
    (raw.providers as unknown[]).push({
      id: "corp",
      style: "openai",
      base_url: "https://llm.corp.example/v1",
      ca_certs_env: "CORP_CA",
    });
  });
  const cases: [string, string | undefined, string][] = [
    ["unset", undefined, "which is not set"],
    ["empty", "", "which is empty"],
    ["no certificate", "CORP_CA", "which holds no -----BEGIN CERTIFICATE----- block"],
    ["the CA cut short", ca.slice(0, 100) + ca.slice(-26), "whose certificates cannot be read"],
  ];
  for (const [name, value, reason] of cases) {
    const kv = await Deno.openKv(":memory:");
    try {
      await assert.rejects(
        createApp({
          config,
          kv,
          env: (n) => (n === "CORP_CA" ? value : undefined),
          output: {
            stdout() {},
            stderr() {},
          },
        }),
        (e: unknown) => {
          assert.ok(e instanceof ConfigError, `${name}: ${e}`);
          assert.ok(
            e.message.startsWith(`provider "corp": ca_certs_env names CORP_CA, ${reason}`),
            `${name}: ${e.message}`,
          );
          return true;
        },
      );
    } finally {
      kv.close();
    }
  }
});

Deno.test("deno task start: with CORP_CA the CA's upstream answers; without it the start fails in one line", async () => {
  const { ca, cert, key } = await testCerts();
  await using upstream = startFakeOpenAI({ tls: { cert, key } });
  await using config = await tempConfig({
    ...simConfig(),
    providers: [{
      id: "corp",
      style: "openai",
      base_url: `${upstream.url}/v1`,
      api_key_env: "UP_KEY",
      ca_certs_env: "CORP_CA",
      max_retries: 0,
    }],
    models: [{ id: "corp-chat", provider: "corp", chat_completions: true }],
  });
  const args = ["--config", config.path];

  const unset = spawnSwitchyard({ args, env: { UP_KEY: upstream.apiKey } });
  const status = await unset.status();
  assert.equal(status.code, 1, unset.stderr);
  assert.deepEqual(unset.stderr.trimEnd().split("\n"), [
    'switchyard: provider "corp": ca_certs_env names CORP_CA, which is not set; it must hold the ' +
    "PEM certificate(s) the upstream's certificate chains to",
  ]);

  await using started = spawnSwitchyard({ args, env: { UP_KEY: upstream.apiKey, CORP_CA: ca } });
  const response = await fetch(`${await started.url()}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "corp-chat", messages: HELLO }),
  });
  assert.equal(response.status, 200, await response.clone().text());
  assert.equal((await response.json()).object, "chat.completion");
});
