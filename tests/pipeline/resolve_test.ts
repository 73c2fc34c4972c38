import assert from "node:assert/strict";
import { createApp } from "../../src/app.ts";
import { KeyStore } from "../../src/auth/keys.ts";
import { resolve } from "../../src/pipeline/resolve.ts";
import { testContext } from "../support/pipeline.ts";
import { CapturedOutput, FakeClock, testConfig } from "../support/server.ts";

/** An app's services over a fresh in-memory KV (the test config's models). */
async function services() {
  const kv = await Deno.openKv(":memory:");
  const app = await createApp({
    config: testConfig(),
    kv,
    clock: new FakeClock(),
    env: () => undefined,
    output: new CapturedOutput(),
  });
  return {
    services: app.services,
    async [Symbol.asyncDispose]() {
      await app.close();
      kv.close();
    },
  };
}

Deno.test("resolve: a model the caller may use, its id and provider kept for settle", async () => {
  await using t = await services();
  const ctx = testContext(undefined, { services: t.services });
  const record = resolve(ctx, "sim-chat");
  assert.equal(record.id, "sim-chat");
  assert.equal(ctx.model, "sim-chat");
  assert.equal(ctx.provider, "sim");
});

Deno.test("resolve: 404 for a model that does not exist (the id asked for is still kept), 401 and 403 by access", async () => {
  await using t = await services();
  const ctx = testContext(undefined, { services: t.services });
  assert.throws(() => resolve(ctx, "nope"), { status: 404, code: "model_not_found" });
  assert.equal(ctx.model, "nope");
  assert.equal(ctx.provider, null);
  assert.throws(() => resolve(ctx, "sim-keyed"), { status: 401 });
  const keyed = testContext(undefined, { services: t.services });
  const { record } = await new KeyStore(t.services.kv, new FakeClock()).create({
    name: "k",
    models: ["sim-chat"],
  });
  keyed.principal = { kind: "key", key: record };
  assert.throws(() => resolve(keyed, "sim-image", "model"), { status: 403 });
  assert.throws(() => resolve(keyed, "sim-keyed"), { status: 403, param: "model" });
  assert.equal(resolve(keyed, "sim-chat").id, "sim-chat");
});
