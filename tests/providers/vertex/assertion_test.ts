/** The service account's JWT assertion, checked by an independent JOSE implementation
 * (`jose`, test-only): RS256 under the account's public key, Google's claims. */
import assert from "node:assert/strict";
import { decodeProtectedHeader, jwtVerify } from "npm:jose@6.2.17";
import {
  CLOUD_PLATFORM_SCOPE,
  importSigningKey,
  signedAssertion,
} from "../../../src/providers/vertex/assertion.ts";
import { readServiceAccount } from "../../../src/providers/vertex/service_account.ts";
import { makeServiceAccount } from "../../support/fake_vertex.ts";

const TOKEN_URL = "https://oauth2.googleapis.com/token";

Deno.test("assertion: jose verifies its RS256 signature and reads Google's claims", async () => {
  const made = await makeServiceAccount();
  const account = readServiceAccount("vx", "SA", made.json);
  const now = 1_768_478_400;
  const assertion = await signedAssertion(account, await importSigningKey(account), TOKEN_URL, now);
  const { payload, protectedHeader } = await jwtVerify(assertion, made.publicKey, {
    algorithms: ["RS256"],
    issuer: made.email,
    audience: TOKEN_URL,
    currentDate: new Date((now + 60) * 1000),
  });
  assert.equal(protectedHeader.typ, "JWT");
  assert.equal(protectedHeader.kid, "0123456789abcdef0123456789abcdef01234567");
  assert.equal(payload.scope, CLOUD_PLATFORM_SCOPE);
  assert.equal(payload.iat, now);
  assert.equal(payload.exp, now + 3600);
});

Deno.test("assertion: another account's key does not verify it", async () => {
  const made = await makeServiceAccount();
  const other = await makeServiceAccount(undefined, "other");
  const account = readServiceAccount("vx", "SA", made.json);
  const assertion = await signedAssertion(account, await importSigningKey(account), TOKEN_URL, 0);
  assert.equal(decodeProtectedHeader(assertion).alg, "RS256");
  await assert.rejects(
    jwtVerify(assertion, other.publicKey, { currentDate: new Date(60_000) }),
    /signature verification failed/,
  );
});
