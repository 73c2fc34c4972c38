/** The `vertex` style's config fields, and its service account read at start: a missing
 * variable disables the provider with one warning; a bad key or an unreadable file stops the
 * start with an error naming the variable. */
import assert from "node:assert/strict";
import { ConfigError } from "../../../src/config/error.ts";
import { parseConfig } from "../../../src/config/parse.ts";
import type { Config } from "../../../src/config/types.ts";
import { FetchHttpClient } from "../../../src/http/client/fetch.ts";
import { Logger } from "../../../src/log/logger.ts";
import { createProviders } from "../../../src/providers/registry.ts";
import { makeServiceAccount } from "../../support/fake_vertex.ts";
import { CapturedOutput, FakeClock } from "../../support/server.ts";

const VERTEX = {
  id: "vx",
  style: "vertex",
  project: "my-project-123",
  region: "us-east5",
  credentials_env: "VERTEX_SA",
};

function config(fields: Record<string, unknown>): Config {
  return parseConfig({
    providers: [fields],
    models: [{
      id: "claude",
      provider: "vx",
      upstream_model: "claude-sonnet-4-5@20250929",
      chat_completions: true,
    }],
  }, "switchyard.json");
}

function start(cfg: Config, env: Record<string, string>) {
  const output = new CapturedOutput();
  const clock = new FakeClock();
  const providers = createProviders(cfg, {
    env: (name) => env[name],
    http: new FetchHttpClient(),
    clock,
    logger: new Logger({ clock, output }),
  });
  return { providers, output };
}

Deno.test("vertex config: fields as given; base_url from the region, token_url Google's", () => {
  const vx = config(VERTEX).providers[0]!;
  assert.equal(vx.base_url, "https://us-east5-aiplatform.googleapis.com");
  assert.deepEqual(vx.vertex, {
    project: "my-project-123",
    region: "us-east5",
    credentials_env: "VERTEX_SA",
    metadata_server: false,
    token_url: "https://oauth2.googleapis.com/token",
    publisher: null,
  });
  // On Google Cloud, the workload's own service account instead of a key.
  const keyless = config({ ...VERTEX, credentials_env: undefined, metadata_server: true });
  assert.equal(keyless.providers[0]!.vertex!.credentials_env, null);
  assert.equal(keyless.providers[0]!.vertex!.metadata_server, true);
  const global = config({ ...VERTEX, region: "global", publisher: "anthropic" }).providers[0]!;
  assert.equal(global.base_url, "https://aiplatform.googleapis.com");
  assert.equal(global.vertex!.publisher, "anthropic");
});

Deno.test("vertex config: each bad value is an error naming the field", () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ ...VERTEX, project: undefined }, /providers\[0\]\.project: /],
    [{ ...VERTEX, region: "US East" }, /providers\[0\]\.region: expected a Google Cloud region/],
    [
      { ...VERTEX, credentials_env: undefined },
      /providers\[0\]\.credentials_env: required: .*metadata_server: true/,
    ],
    [
      { ...VERTEX, metadata_server: true },
      /providers\[0\]\.metadata_server: .*credentials_env or from the metadata server, not both/,
    ],
    [{ ...VERTEX, metadata_server: "yes" }, /providers\[0\]\.metadata_server: /],
    [{ ...VERTEX, api_key_env: "K" }, /providers\[0\]\.api_key_env: .*credentials_env/],
    [{ ...VERTEX, token_url: "ftp://x" }, /providers\[0\]\.token_url: expected an http\(s\) URL/],
    [{ ...VERTEX, publisher: "meta" }, /providers\[0\]\.publisher: /],
  ];
  for (const [fields, message] of cases) {
    assert.throws(() => config(fields), (e: unknown) => {
      assert.ok(e instanceof ConfigError, String(e));
      assert.match(e.message, message);
      return true;
    });
  }
});

Deno.test("vertex credentials: an unset variable disables the provider with one warning", () => {
  const { providers, output } = start(config(VERTEX), {});
  assert.equal(providers.isAvailable("vx"), false);
  assert.equal(output.err.trim().split("\n").length, 1);
  assert.match(output.err, /provider \\"vx\\" disabled: VERTEX_SA is not set/);
});

Deno.test("vertex credentials: the key's JSON, or the path of its file", async () => {
  const account = await makeServiceAccount();
  assert.ok(start(config(VERTEX), { VERTEX_SA: account.json }).providers.isAvailable("vx"));
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/key.json`;
    await Deno.writeTextFile(path, account.json);
    const { providers, output } = start(config(VERTEX), { VERTEX_SA: path });
    assert.ok(providers.isAvailable("vx"));
    assert.equal(output.err, "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("vertex credentials: a bad key or a file it cannot read stops the start, naming the variable only", async () => {
  const account = await makeServiceAccount();
  const key = JSON.parse(account.json);
  const cases: [string, RegExp][] = [
    [
      "/nonexistent/key.json",
      /VERTEX_SA, whose file "\/nonexistent\/key\.json" is a path which does not exist/,
    ],
    ["{not json", /VERTEX_SA, which is not JSON/],
    [JSON.stringify({ ...key, type: "authorized_user" }), /whose type is "authorized_user"/],
    [JSON.stringify({ ...key, client_email: undefined }), /whose key has no client_email/],
    [JSON.stringify({ ...key, private_key: "secret" }), /whose private_key is not a PEM/],
  ];
  for (const [value, message] of cases) {
    assert.throws(() => start(config(VERTEX), { VERTEX_SA: value }), (e: unknown) => {
      assert.ok(e instanceof ConfigError, String(e));
      assert.match(e.message, message);
      assert.match(e.message, /data\//, "says where a key file may live");
      assert.ok(!e.message.includes(key.private_key.split("\n")[1]), "no key material");
      assert.ok(!e.message.includes('"secret"'));
      return true;
    });
  }
});
