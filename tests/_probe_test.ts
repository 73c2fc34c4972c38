import Anthropic from "npm:@anthropic-ai/sdk@1.12.0";
import { startSdkGateway } from "./support/sdk_gateway.ts";

Deno.test("probe", async () => {
  await using gw = await startSdkGateway();
  const client = new Anthropic({ baseURL: gw.server.url, apiKey: gw.apiKey, maxRetries: 0 });
  for (const model of ["sim-vision", "oa-chat", "an-chat"]) {
    const m = await client.messages.create({ model, max_tokens: 100, messages: [{ role: "user", content: "Hello there" }] });
    console.log(JSON.stringify(m));
    const s = client.messages.stream({ model, max_tokens: 100, messages: [{ role: "user", content: "Hello there" }] });
    console.log(JSON.stringify(await s.finalMessage()));
    console.log(JSON.stringify(await client.messages.countTokens({ model, messages: [{ role: "user", content: "Hello there" }] })));
  }
  console.log(JSON.stringify(await client.models.list()));
  console.log(gw.anthropic.violations);
});
