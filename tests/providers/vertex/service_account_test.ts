import assert from "node:assert/strict";
import { ConfigError } from "../../../src/config/error.ts";
import { readServiceAccount } from "../../../src/providers/vertex/service_account.ts";
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
