import assert from "node:assert/strict";
import { startServer } from "./support/server.ts";

Deno.test("the app answers /healthz on a real port", async () => {
  await using server = await startServer();
  const res = await fetch(`${server.url}/healthz`);
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: "ok" });
});
