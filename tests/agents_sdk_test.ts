/**
 * The OpenAI Agents SDK (`@openai/agents`) runs an agent with one function tool to completion
 * through the gateway's Responses API, its default client pointed at the gateway: the
 * simulator calls the tool the user's text names, the SDK runs it and sends its output back,
 * and the simulator answers with the tool's result.
 */
import assert from "node:assert/strict";
import {
  Agent,
  run,
  setDefaultOpenAIClient,
  setOpenAIAPI,
  setTracingDisabled,
  tool,
} from "npm:@openai/agents@0.20.0";
import { z } from "npm:zod@4.6.7";
import { startResponsesGateway } from "./api/responses/gateway.ts";
import { eventually } from "./support/eventually.ts";

Deno.test("an agent with one function tool runs to completion on the simulator", async () => {
  await using gw = await startResponsesGateway();
  setTracingDisabled(true);
  setOpenAIAPI("responses");
  // The SDK's client type comes from its own copy of `openai`; the gateway's client is the same
  // class at the version the tests pin.
  setDefaultOpenAIClient(gw.client() as unknown as Parameters<typeof setDefaultOpenAIClient>[0]);
  const calls: string[] = [];
  const getWeather = tool({
    name: "get_weather",
    description: "Current weather for a city",
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => {
      calls.push(city);
      return `18C and sunny in ${city}`;
    },
  });
  const agent = new Agent({
    name: "Weather",
    instructions: "Answer with the weather.",
    model: "sim-vision",
    tools: [getWeather],
  });
  for (const stream of [false, true]) {
    calls.length = 0;
    const input = "Call get_weather for Paris";
    let output: unknown;
    if (stream) {
      const result = await run(agent, input, { stream: true });
      for await (const _ of result.toStream()) { /* drain */ }
      await result.completed;
      output = result.finalOutput;
    } else {
      output = (await run(agent, input)).finalOutput;
    }
    assert.equal(calls.length, 1, "the tool ran once");
    assert.equal(typeof output, "string");
    assert.ok((output as string).length > 0);
  }
  // A stream's record is written when its body has been read to the end.
  const logged = await eventually(() => {
    const records = gw.server.output.records().filter((r) => r.path === "/v1/responses");
    return records.length >= 4 ? records : undefined;
  }, "a log record for each of the four model calls");
  assert.ok(logged.every((r) => r.status === 200), JSON.stringify(logged));
});
