/** The gateway's SigV4 signer against AWS's own (`@smithy/signature-v4`), request by request. */
import assert from "node:assert/strict";
import { SigningKeys, signRequest } from "../../../src/providers/bedrock/sigv4.ts";
import { awsSignature, FAKE_AWS_CREDENTIALS } from "../../support/fake_bedrock.ts";

const NOW = Date.UTC(2026, 0, 15, 12, 34, 56);

/** A Converse call to sign, at {@link NOW}, with the fake's credentials. */
const CONVERSE = {
  credentials: FAKE_AWS_CREDENTIALS,
  now: NOW,
  region: "us-east-1",
  service: "bedrock",
  method: "POST",
  url: "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse",
  headers: {},
  body: "{}",
};

/** Signs with ours, then has AWS's signer sign the same headers; both Authorization headers. */
async function both(
  url: string,
  body: string,
  headers: Record<string, string>,
  credentials = FAKE_AWS_CREDENTIALS,
  region = "us-east-1",
) {
  const ours = await signRequest({
    credentials,
    now: NOW,
    region,
    service: "bedrock",
    method: "POST",
    url,
    headers,
    body,
  });
  const sent = new Headers(ours);
  sent.set("host", new URL(url).host);
  const signed = /SignedHeaders=([^,]+),/.exec(ours.authorization!)![1]!.split(";");
  const theirs = await awsSignature(
    { method: "POST", url, headers: sent, body },
    signed,
    credentials,
    region,
    new Date(NOW),
  );
  return { ours, theirs, signed };
}

Deno.test("sigv4: a Converse request is signed as AWS's signer signs it", async () => {
  const { ours, theirs, signed } = await both(
    "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse",
    '{"messages":[{"role":"user","content":[{"text":"Hi"}]}]}',
    { "content-type": "application/json" },
  );
  assert.equal(ours.authorization, theirs);
  assert.equal(ours["x-amz-date"], "20260115T123456Z");
  assert.deepEqual(signed, ["content-type", "host", "x-amz-content-sha256", "x-amz-date"]);
  assert.match(
    ours.authorization!,
    /^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/20260115\/us-east-1\/bedrock\/aws4_request, /,
  );
});

Deno.test("sigv4: a session token is sent and signed", async () => {
  const credentials = {
    ...FAKE_AWS_CREDENTIALS,
    sessionToken: "FwoGZXIvYXdzEJr//////////wEaDL+token=",
  };
  const { ours, theirs, signed } = await both(
    "https://bedrock-runtime.eu-central-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream",
    "{}",
    { "content-type": "application/json" },
    credentials,
    "eu-central-1",
  );
  assert.equal(ours["x-amz-security-token"], credentials.sessionToken);
  assert.ok(signed.includes("x-amz-security-token"));
  assert.equal(ours.authorization, theirs);
});

Deno.test("sigv4: query strings are sorted and encoded as AWS's signer does", async () => {
  const { ours, theirs } = await both(
    "https://bedrock.us-west-2.amazonaws.com/foundation-models?byProvider=anthropic&byOutputModality=TEXT&a%20b=c%2Fd&z=%E2%9C%93",
    "",
    {},
    FAKE_AWS_CREDENTIALS,
    "us-west-2",
  );
  assert.equal(ours.authorization, theirs);
});

Deno.test("sigv4: a unicode path, dot segments and extra headers (spaces folded) sign alike", async () => {
  const { ours, theirs, signed } = await both(
    `https://127.0.0.1:8443/model/${
      encodeURIComponent(
        "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/ünïcødé ✓",
      )
    }/./invoke`,
    '{"inputText":"héllo ✓"}',
    {
      "Content-Type": "application/json",
      "X-Custom-Thing": "  a   b  ",
      "User-Agent": "switchyard",
    },
  );
  assert.equal(ours.authorization, theirs);
  assert.ok(signed.includes("x-custom-thing"));
  assert.ok(!signed.includes("user-agent"), "user-agent is never signed");
});

Deno.test("sigv4: a different secret, body or time gives a different signature", async () => {
  const base = CONVERSE;
  const first = (await signRequest(base)).authorization;
  assert.notEqual((await signRequest({ ...base, body: "{ }" })).authorization, first);
  assert.notEqual((await signRequest({ ...base, now: NOW + 1000 })).authorization, first);
  assert.notEqual(
    (await signRequest({
      ...base,
      credentials: { ...FAKE_AWS_CREDENTIALS, secretAccessKey: "other" },
    })).authorization,
    first,
  );
});

Deno.test("sigv4: a kept signing key signs as a fresh one, and a new day derives its own", async () => {
  const keys = new SigningKeys();
  const base = CONVERSE;
  for (const now of [NOW, NOW + 60_000, NOW + 86_400_000, NOW]) {
    assert.equal(
      (await signRequest({ ...base, now }, keys)).authorization,
      (await signRequest({ ...base, now })).authorization,
    );
  }
  // A role's renewed credentials the same day: a key of their own.
  const renewed = { ...base, credentials: { ...FAKE_AWS_CREDENTIALS, secretAccessKey: "renewed" } };
  assert.equal(
    (await signRequest(renewed, keys)).authorization,
    (await signRequest(renewed)).authorization,
  );
});

Deno.test("sigv4: a body given as bytes, or as parts, signs as the same text", async () => {
  const base = CONVERSE;
  const text = '{"messages":[{"role":"user","content":[{"text":"héllo ✓"}]}]}';
  const bytes = new TextEncoder().encode(text);
  const expected = (await signRequest({ ...base, body: text })).authorization;
  assert.equal((await signRequest({ ...base, body: bytes })).authorization, expected);
  const parts = [bytes.subarray(0, 7), bytes.subarray(7, 20), bytes.subarray(20)];
  assert.equal((await signRequest({ ...base, body: parts })).authorization, expected);
});
