import assert from "node:assert/strict";
import type { BedrockConfig } from "../../../src/config/types.ts";
import { awsCredentials, stsEndpoint } from "../../../src/providers/bedrock/credentials.ts";

Deno.test("stsEndpoint: regional by default; AWS_STS_REGIONAL_ENDPOINTS=legacy's global one for the regions that used it", () => {
  assert.equal(stsEndpoint("eu-west-1"), "https://sts.eu-west-1.amazonaws.com");
  assert.equal(stsEndpoint("cn-north-1"), "https://sts.cn-north-1.amazonaws.com.cn");
  assert.equal(stsEndpoint("us-east-1", true), "https://sts.amazonaws.com");
  assert.equal(stsEndpoint("eu-west-1", true), "https://sts.amazonaws.com");
  assert.equal(stsEndpoint("af-south-1", true), "https://sts.af-south-1.amazonaws.com");
});

Deno.test("awsCredentials: an EKS role's STS is the global endpoint under AWS_STS_REGIONAL_ENDPOINTS=legacy", () => {
  const config = {
    region: "us-east-1",
    access_key_id_env: "AWS_ACCESS_KEY_ID",
    secret_access_key_env: "AWS_SECRET_ACCESS_KEY",
    session_token_env: "AWS_SESSION_TOKEN",
    instance_role: false,
  } as BedrockConfig;
  const irsa: Record<string, string> = {
    AWS_WEB_IDENTITY_TOKEN_FILE: "/var/run/secrets/eks.amazonaws.com/serviceaccount/token",
    AWS_ROLE_ARN: "arn:aws:iam::123456789012:role/bedrock",
  };
  const stsOf = (env: Record<string, string>) => {
    const found = awsCredentials(config, (name) => env[name]);
    return "role" in found && found.role.kind === "web_identity" ? found.role.sts : null;
  };
  assert.equal(stsOf(irsa), "https://sts.us-east-1.amazonaws.com");
  assert.equal(
    stsOf({ ...irsa, AWS_STS_REGIONAL_ENDPOINTS: "legacy" }),
    "https://sts.amazonaws.com",
  );
  assert.equal(
    stsOf({ ...irsa, AWS_STS_REGIONAL_ENDPOINTS: "regional" }),
    "https://sts.us-east-1.amazonaws.com",
  );
});
