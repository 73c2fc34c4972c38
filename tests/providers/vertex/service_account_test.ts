import assert from "node:assert/strict";
import { ConfigError } from "../../../src/config/error.ts";
import {
  readGoogleCredentials,
  readServiceAccount,
} from "../../../src/providers/vertex/service_account.ts";
import { makeServiceAccount } from "../../support/fake_vertex.ts";

Deno.test("service account: a path the start task may not read is a clear config error", async () => {
  const account = await makeServiceAccount();
  const refuse = () => {
    throw new Deno.errors.NotCapable('Requires read access to "/etc/sa.json"');
  };
  assert.throws(
    () => readServiceAccount("vx", "VERTEX_SA", "/etc/sa.json", refuse),
    (e: unknown) =>
      e instanceof ConfigError &&
      /whose file "\/etc\/sa\.json" is a path which the gateway is not allowed to read \(the start task reads only switchyard\.json and data\/\)/
        .test(e.message),
  );
  const read = readServiceAccount("vx", "VERTEX_SA", "data/sa.json", () => account.json);
  assert.equal(read.clientEmail, account.email);
  assert.equal(read.privateKeyId, "0123456789abcdef0123456789abcdef01234567");
  assert.ok(read.privateKey.length > 1000);
});

const AUDIENCE =
  "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/q";

/** An external_account configuration with `more` over a minimal one. */
function external(more: Record<string, unknown> = {}): string {
  return JSON.stringify({
    type: "external_account",
    audience: AUDIENCE,
    subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
    credential_source: { file: "/var/run/secrets/azure/tokens/azure-identity-token" },
    ...more,
  });
}

Deno.test("external_account: gcloud's configuration read, with Google's defaults", () => {
  const read = readGoogleCredentials("vx", "VX", external());
  assert.deepEqual(read, {
    kind: "external_account",
    account: {
      audience: AUDIENCE,
      subjectTokenType: "urn:ietf:params:oauth:token-type:jwt",
      tokenUrl: "https://sts.googleapis.com/v1/token",
      impersonationUrl: null,
      lifetimeSeconds: 3600,
      source: {
        kind: "file",
        path: "/var/run/secrets/azure/tokens/azure-identity-token",
        field: null,
      },
      userProject: null,
    },
  });
  const full = readGoogleCredentials(
    "vx",
    "VX",
    external({
      token_url: "https://sts.example.test/v1/token",
      service_account_impersonation_url:
        "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/a@b.iam.gserviceaccount.com:generateAccessToken",
      service_account_impersonation: { token_lifetime_seconds: 1800 },
      workforce_pool_user_project: "proj",
      credential_source: {
        url: "http://169.254.169.254/metadata/identity/oauth2/token?api-version=2018-02-01",
        headers: { Metadata: "True" },
        format: { type: "json", subject_token_field_name: "access_token" },
      },
    }),
  );
  assert.equal(full.kind, "external_account");
  if (full.kind !== "external_account") return;
  assert.equal(full.account.lifetimeSeconds, 1800);
  assert.equal(full.account.userProject, "proj");
  assert.deepEqual(full.account.source, {
    kind: "url",
    url: "http://169.254.169.254/metadata/identity/oauth2/token?api-version=2018-02-01",
    headers: { Metadata: "True" },
    field: "access_token",
  });
  const aws = readGoogleCredentials(
    "vx",
    "VX",
    external({
      credential_source: {
        environment_id: "aws1",
        region_url: "http://169.254.169.254/latest/meta-data/placement/availability-zone",
        url: "http://169.254.169.254/latest/meta-data/iam/security-credentials",
        regional_cred_verification_url:
          "https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15",
      },
    }),
  );
  assert.deepEqual(aws.kind === "external_account" && aws.account.source, {
    kind: "aws",
    verificationUrl:
      "https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15",
    regionUrl: "http://169.254.169.254/latest/meta-data/placement/availability-zone",
    credentialsUrl: "http://169.254.169.254/latest/meta-data/iam/security-credentials",
    sessionTokenUrl: null,
  });
  assert.throws(
    () => readServiceAccount("vx", "VX", external()),
    /credentials_env names VX, which holds an external_account configuration, not a service account key/,
  );
});

Deno.test("external_account: what is wrong is named, never a value", () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ audience: 5 }, /whose audience is not a string/],
    [{ subject_token_type: "" }, /whose subject_token_type is not a string/],
    [{ token_url: "ftp://x" }, /whose token_url is not an http\(s\) URL/],
    [{ service_account_impersonation_url: "nope" }, /service_account_impersonation_url is not/],
    [
      { service_account_impersonation: { token_lifetime_seconds: 60 } },
      /token_lifetime_seconds is not from 600 to 43200/,
    ],
    [{ credential_source: "file" }, /whose credential_source is not an object/],
    [{ credential_source: { environment_id: "aws1" } }, /regional_cred_verification_url is not/],
    [{ credential_source: { environment_id: "aws2" } }, /environment_id is not "aws1"/],
    [{ credential_source: { url: "http://x", headers: { a: 1 } } }, /headers is not an object/],
    [{ credential_source: { file: "/t", format: { type: "xml" } } }, /format\.type is not/],
  ];
  for (const [more, message] of cases) {
    assert.throws(
      () => readGoogleCredentials("vx", "VX", external(more)),
      (e: unknown) =>
        e instanceof ConfigError && message.test(e.message) &&
        e.message.startsWith('provider "vx": credentials_env names VX, whose'),
      JSON.stringify(more),
    );
  }
});
