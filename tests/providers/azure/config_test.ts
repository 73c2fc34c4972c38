/** The `azure` style's config fields: read, defaulted and refused with the field named. */
import assert from "node:assert/strict";
import { ConfigError } from "../../../src/config/error.ts";
import { parseConfig } from "../../../src/config/parse.ts";

const AZURE = {
  id: "az",
  style: "azure",
  base_url: "https://contoso.openai.azure.com/",
  api_key_env: "AZURE_OPENAI_API_KEY",
  api_version: "2024-10-21",
};

function provider(fields: Record<string, unknown>) {
  const raw = {
    providers: [fields],
    models: [{ id: "gpt", provider: "az", upstream_model: "gpt-4o-prod", chat_completions: true }],
  };
  return parseConfig(raw, "switchyard.json").providers[0]!;
}

Deno.test("azure config: the issue's fields, read as given", () => {
  const az = provider(AZURE);
  assert.equal(az.base_url, "https://contoso.openai.azure.com");
  assert.equal(az.api_key_env, "AZURE_OPENAI_API_KEY");
  const none = {
    tenant_id: null,
    client_id: null,
    client_secret_env: null,
    token_url: null,
    managed_identity: false,
  };
  assert.deepEqual(az.azure, { api_version: "2024-10-21", bearer_token_env: null, ...none });
  const entra = provider({ ...AZURE, api_key_env: undefined, bearer_token_env: "AZ_TOKEN" });
  assert.deepEqual(entra.azure, {
    api_version: "2024-10-21",
    bearer_token_env: "AZ_TOKEN",
    ...none,
  });
  assert.equal(provider({ ...AZURE, api_version: "v1" }).azure!.api_version, "v1");
  assert.equal(provider({ ...AZURE, responses_api: true }).responses_api, true);
});

Deno.test("azure config: each bad value is an error naming the field", () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [
      { ...AZURE, base_url: undefined },
      /providers\[0\]\.base_url: .*<resource>\.openai\.azure\.com/,
    ],
    [{ ...AZURE, api_version: undefined }, /providers\[0\]\.api_version: /],
    [{ ...AZURE, api_version: "2024-10" }, /providers\[0\]\.api_version: expected a dated version/],
    [
      { ...AZURE, bearer_token_env: "AZ_TOKEN" },
      /providers\[0\]\.bearer_token_env: give one of api_key_env .*, bearer_token_env .*, not several/,
    ],
    [{ ...AZURE, project: "p" }, /providers\[0\]\.project: /],
  ];
  for (const [fields, message] of cases) {
    assert.throws(() => provider(fields), (e: unknown) => {
      assert.ok(e instanceof ConfigError, String(e));
      assert.match(e.message, message);
      return true;
    });
  }
});

Deno.test("azure config: a model asking what Azure has no API for is refused", () => {
  assert.throws(
    () =>
      parseConfig({
        providers: [AZURE],
        models: [{ id: "mod", provider: "az", moderation: true }],
      }, "switchyard.json"),
    /style azure\) cannot serve moderation/,
  );
});

Deno.test("azure config: client_secret_env needs tenant_id and client_id, and is one way among api_key_env and bearer_token_env", () => {
  const base = { ...AZURE, api_key_env: undefined };
  const app = {
    ...base,
    tenant_id: "contoso.onmicrosoft.com",
    client_id: "0d3f2c1b-5a4e-4b6c-9d8e-7f6a5b4c3d2e",
    client_secret_env: "AZ_SECRET",
  };
  assert.equal(
    provider(app).azure!.token_url,
    "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token",
  );
  assert.throws(
    () => provider({ ...app, tenant_id: undefined }),
    /providers\[0\]\.tenant_id: required with client_secret_env/,
  );
  assert.throws(
    () => provider({ ...app, api_key_env: "AZ_KEY" }),
    /client_secret_env: give one of api_key_env .*, client_secret_env .*, not several/,
  );
  assert.throws(
    () =>
      provider({
        ...base,
        api_key_env: "AZ_KEY",
        client_id: "0d3f2c1b-5a4e-4b6c-9d8e-7f6a5b4c3d2e",
      }),
    /providers\[0\]\.client_id: only a provider with client_secret_env uses it/,
  );
  assert.throws(() => provider({ ...app, tenant_id: "not a tenant!" }), /tenant_id/);
});

Deno.test("azure config: managed_identity is one way among the others, user-assigned by client_id, with no tenant or token endpoint", () => {
  const base = { ...AZURE, api_key_env: undefined };
  const mi = provider({ ...base, managed_identity: true }).azure!;
  assert.equal(mi.managed_identity, true);
  assert.equal(mi.client_id, null);
  const assigned = "0d3f2c1b-5a4e-4b6c-9d8e-7f6a5b4c3d2e";
  assert.equal(
    provider({ ...base, managed_identity: true, client_id: assigned }).azure!.client_id,
    assigned,
  );
  assert.throws(
    () => provider({ ...AZURE, managed_identity: true }),
    /providers\[0\]\.managed_identity: give one of api_key_env .*, managed_identity .*, not several/,
  );
  assert.throws(
    () => provider({ ...base, managed_identity: true, tenant_id: "contoso.onmicrosoft.com" }),
    /providers\[0\]\.tenant_id: a managed identity's tokens come from Azure itself/,
  );
  assert.throws(() => provider({ ...base, managed_identity: "yes" }), /managed_identity/);
});
