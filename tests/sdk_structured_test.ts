/**
 * Structured output end to end, with the real client SDKs against the gateway, for each style
 * (the simulator, a model on the fake OpenAI upstream, one on the fake Anthropic upstream):
 * the `openai` client's `chat.completions.parse()` (and its streaming `.stream()`) with
 * `zodResponseFormat`, the Vercel AI SDK's `generateObject` and `generateText` with a tool,
 * LangChain's `withStructuredOutput` (its default method, `jsonSchema` and `functionCalling`),
 * and plain `json_object` mode. Each answer must be what zod accepts.
 *
 * The fakes answer with {@link structuredScript}: a fixed recipe, as the arguments of a forced
 * tool or as JSON text, so the test holds whichever translation the Anthropic adapter uses
 * (a forced tool, a native output format, a prefill); what reached the upstream is checked
 * to carry the schema. A fourth model, on the Anthropic fake as Claude Sonnet 4.5, has native
 * structured outputs: there the fake samples the answer from the schema it received, and
 * rejects schema keywords outside Anthropic's subset.
 */
import assert from "node:assert/strict";
import { z } from "npm:zod@4.6.7";
import { zodResponseFormat } from "npm:openai@7.55.0/helpers/zod";
import { generateObject, generateText, stepCountIs, tool } from "npm:ai@7.0.173";
import {
  aiSdkProvider,
  ANTHROPIC_NATIVE,
  carriesSchema,
  deadline,
  type JsonBody,
  langchainModel,
  openaiClient,
  type SdkGateway,
  startSdkGateway,
  structuredScript,
  type Style,
  STYLES,
  within,
} from "./support/sdk_gateway.ts";

// The AI SDK logs a deprecation warning for generateObject (v7 prefers generateText with
// `output`); the test uses it on purpose, as most code in the wild still does.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

/** An object with a string, a number, an enum, an array of objects and a nullable field. */
const Recipe = z.object({
  title: z.string(),
  servings: z.number(),
  difficulty: z.enum(["easy", "medium", "hard"]),
  ingredients: z.array(z.object({ name: z.string(), grams: z.number() })),
  notes: z.string().nullable(),
});
type Recipe = z.infer<typeof Recipe>;

/** What the fakes answer. */
const PANCAKES: Recipe = {
  title: "Pancakes",
  servings: 4,
  difficulty: "easy",
  ingredients: [{ name: "flour", grams: 200 }, { name: "milk", grams: 300 }],
  notes: null,
};

/** The recipe schema as JSON schema (for finding it in upstream requests). */
const RECIPE_SCHEMA = z.toJSONSchema(Recipe) as Record<string, unknown>;

const PROMPT = "Give me a recipe for pancakes as structured data.";

/** A gateway whose fakes answer the recipe. */
async function recipeGateway(): Promise<SdkGateway> {
  const gateway = await startSdkGateway({ sliceBytes: 7 });
  gateway.openai.script = structuredScript(gateway.openai, PANCAKES);
  gateway.anthropic.script = structuredScript(gateway.anthropic, PANCAKES);
  return gateway;
}

/** Checks the value with zod (and, from a fake, that it is the fake's recipe). */
function assertRecipe(value: unknown, style: Style, what: string): Recipe {
  const parsed = Recipe.safeParse(value);
  assert.ok(parsed.success, `${style.model} ${what}: ${JSON.stringify(value)} is not a recipe`);
  if (style.scripted) assert.deepEqual(parsed.data, PANCAKES, `${style.model} ${what}`);
  return parsed.data;
}

/** Checks that the schema reached the style's upstream and that the fakes saw no violation. */
function assertSchemaForwarded(gateway: SdkGateway, style: Style): void {
  assert.deepEqual(gateway.openai.violations, [], "requests to the OpenAI fake");
  assert.deepEqual(gateway.anthropic.violations, [], "requests to the Anthropic fake");
  const fake = gateway.fakeOf(style);
  if (fake) {
    assert.ok(
      carriesSchema(fake.last.body, RECIPE_SCHEMA),
      `${style.name}: the upstream request carries the schema: ${JSON.stringify(fake.last.body)}`,
    );
  }
}

for (const style of [...STYLES, ANTHROPIC_NATIVE]) {
  Deno.test(`structured: openai .parse() with zodResponseFormat on ${style.model}`, async () => {
    await using gateway = await recipeGateway();
    const client = openaiClient(gateway);
    const format = zodResponseFormat(Recipe, "recipe");
    const completion = await client.chat.completions.parse({
      model: style.model,
      messages: [{ role: "user", content: PROMPT }],
      response_format: format,
    });
    const choice = completion.choices[0]!;
    assert.equal(choice.finish_reason, "stop");
    assert.equal(choice.message.refusal, null);
    assertRecipe(choice.message.parsed, style, ".parse()");
    assertRecipe(JSON.parse(choice.message.content!), style, "content");
    assertSchemaForwarded(gateway, style);
    if (style.name === "openai") {
      // An OpenAI-style upstream gets the response_format exactly as the client sent it.
      const sent = JSON.parse(JSON.stringify(format));
      assert.deepEqual(
        (gateway.openai.last.body as { response_format: unknown }).response_format,
        sent,
      );
    }
  });

  Deno.test(`structured: openai .stream() with zodResponseFormat on ${style.model}`, async () => {
    await using gateway = await recipeGateway();
    const client = openaiClient(gateway);
    const stream = client.chat.completions.stream({
      model: style.model,
      messages: [{ role: "user", content: PROMPT }],
      response_format: zodResponseFormat(Recipe, "recipe"),
    }, { signal: deadline() });
    const final = await within("the streamed completion", stream.finalChatCompletion());
    const choice = final.choices[0]!;
    assert.equal(choice.finish_reason, "stop");
    assertRecipe(choice.message.parsed, style, ".stream()");
    assertSchemaForwarded(gateway, style);
  });

  Deno.test(`structured: AI SDK generateObject on ${style.model}`, async () => {
    await using gateway = await recipeGateway();
    const result = await generateObject({
      model: aiSdkProvider(gateway).chat(style.model),
      schema: Recipe,
      prompt: PROMPT,
      maxRetries: 0,
      abortSignal: deadline(),
    });
    assertRecipe(result.object, style, "generateObject");
    assert.equal(result.finishReason, "stop");
    assert.ok(result.usage.inputTokens! > 0, `usage: ${JSON.stringify(result.usage)}`);
    assertSchemaForwarded(gateway, style);
  });

  for (const method of [undefined, "jsonSchema", "functionCalling"] as const) {
    const label = method ?? "its default method";
    Deno.test(`structured: LangChain withStructuredOutput (${label}) on ${style.model}`, async () => {
      await using gateway = await recipeGateway();
      const model = langchainModel(gateway, style.model);
      const structured = method === undefined
        ? model.withStructuredOutput(Recipe)
        : model.withStructuredOutput(Recipe, { method });
      const value = await structured.invoke(PROMPT, { signal: deadline() });
      assertRecipe(value, style, `withStructuredOutput ${label}`);
      assertSchemaForwarded(gateway, style);
      if (style.name === "openai") {
        const body = gateway.openai.last.body as JsonBody;
        if (method === "functionCalling") {
          assert.equal(body.tools[0].function.name, "extract");
          assert.deepEqual(body.tool_choice, { type: "function", function: { name: "extract" } });
        } else {
          // LangChain's default for a model name not starting gpt-3/gpt-4- is jsonSchema.
          assert.equal(body.response_format.type, "json_schema");
          assert.equal(body.response_format.json_schema.name, "extract");
        }
      }
    });
  }
}

for (const style of STYLES) {
  Deno.test(`structured: json_object mode returns parseable JSON on ${style.model}`, async () => {
    await using gateway = await startSdkGateway({ sliceBytes: 7 });
    const answer = { greeting: "hello", language: "en" };
    gateway.openai.script = structuredScript(gateway.openai, answer);
    gateway.anthropic.script = structuredScript(gateway.anthropic, answer);
    const client = openaiClient(gateway);
    const params = {
      model: style.model,
      messages: [{ role: "user" as const, content: "Greet me. Answer with a JSON object." }],
      response_format: { type: "json_object" as const },
    };
    const completion = await client.chat.completions.create(params);
    const content = completion.choices[0]!.message.content!;
    const parsed = JSON.parse(content);
    assert.ok(typeof parsed === "object" && parsed !== null && !Array.isArray(parsed), content);
    if (style.scripted) assert.deepEqual(parsed, answer);

    const stream = await client.chat.completions.create({ ...params, stream: true });
    let streamed = "";
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? "";
    assert.deepEqual(JSON.parse(streamed), parsed, "the stream adds up to the same JSON");
    if (style.name === "openai") {
      assert.deepEqual(
        (gateway.openai.last.body as { response_format: unknown }).response_format,
        { type: "json_object" },
      );
    }
    assert.deepEqual(gateway.openai.violations, []);
    assert.deepEqual(gateway.anthropic.violations, []);
  });

  Deno.test(`structured: AI SDK generateText with a zod tool on ${style.model}`, async () => {
    await using gateway = await startSdkGateway({ sliceBytes: 7 });
    const calls: { city: string }[] = [];
    const result = await generateText({
      model: aiSdkProvider(gateway).chat(style.model),
      prompt: "Call get_weather for Paris",
      tools: {
        get_weather: tool({
          description: "Current weather for a city",
          inputSchema: z.object({ city: z.string() }),
          execute: ({ city }) => {
            calls.push({ city });
            return Promise.resolve("18C and sunny");
          },
        }),
      },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
      abortSignal: deadline(),
    });
    assert.equal(calls.length, 1, `the tool ran once: ${JSON.stringify(result.steps)}`);
    assert.equal(typeof calls[0]!.city, "string");
    if (style.scripted) assert.equal(calls[0]!.city, "Paris");
    const first = result.steps[0]!;
    assert.equal(first.finishReason, "tool-calls");
    assert.equal(first.toolCalls[0]!.toolName, "get_weather");
    assert.equal(result.steps.length, 2);
    assert.equal(result.finishReason, "stop");
    assert.match(result.text, /18C and sunny/);
    assert.deepEqual(gateway.openai.violations, []);
    assert.deepEqual(gateway.anthropic.violations, []);
  });
}
