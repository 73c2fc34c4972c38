/** Client IPs behind a trusted proxy, on a real port (issue #16): garbage in X-Forwarded-For
 * does not buy fresh anonymous limits. */
import assert from "node:assert/strict";
import { startServer, testConfig } from "./support/server.ts";

Deno.test("with trust_proxy, rotating garbage X-Forwarded-For values shares the connection's anonymous limit", async () => {
  await using server = await startServer({
    config: testConfig((raw) => {
      raw.server = { port: 0, hostname: "127.0.0.1", trust_proxy: true };
      raw.limits = { anonymous: { other: { per_minute: 3, per_day: 1000 } } };
    }),
  });
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) {
    const res = await fetch(`${server.url}/v1/models`, {
      headers: { "x-forwarded-for": `not-an-ip-${i}` },
    });
    await res.body?.cancel();
    statuses.push(res.status);
  }
  assert.deepEqual(statuses, [200, 200, 200, 429, 429, 429]);
  // A real address from the proxy is its own client.
  const real = await fetch(`${server.url}/v1/models`, {
    headers: { "x-forwarded-for": "203.0.113.50" },
  });
  await real.body?.cancel();
  assert.equal(real.status, 200);
  await server.app.services.logger.flush();
  const ips = new Set(server.output.records().map((r) => r.ip));
  assert.deepEqual([...ips].sort(), ["127.0.0.1", "203.0.113.50"]);
});
