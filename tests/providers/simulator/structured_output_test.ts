/**
 * Structured outputs as real clients ask for them: the JSON schemas that `openai`'s `.parse()`
 * (zodResponseFormat, zodFunction), the AI SDK's `generateObject` (zodSchema) and LangChain's
 * `withStructuredOutput` (toJsonSchema) derive from zod schemas. The simulator's answer must
 * pass both a JSON-schema check and the client's own zod parse.
 */
import assert from "node:assert/strict";
import { toJsonSchema } from "npm:@langchain/core@1.4.0/utils/json_schema";
import { zodSchema } from "npm:ai@7.0.173";
import { zodFunction, zodResponseFormat } from "npm:openai@7.55.0/helpers/zod";
import { z } from "npm:zod@4.6.7";
import type { CanonicalResult } from "../../../src/canonical/result.ts";
import { inlineImageWork } from "../../../src/images/work.ts";
import { simulateChat } from "../../../src/providers/simulator/chat.ts";
import { schemaErrors } from "../../support/json_schema.ts";
import { callContext, chatRequest, modelRecord } from "../../support/provider_call.ts";

const OPTIONS = { tokenDelayMs: 0, images: inlineImageWork };
const MODEL = modelRecord({ id: "sim-chat", provider: "sim", upstream_model: "sim-chat" });

const Address = z.object({
  street: z.string(),
  city: z.string().min(2).max(40),
  zip: z.string().regex(/^[0-9]{5}$/),
});

interface Person {
  name: string;
  friends: Person[];
}
const Person: z.ZodType<Person> = z.lazy(() =>
  z.object({ name: z.string(), friends: z.array(Person) })
);

/** A schema with what strict structured outputs use: every property required, no extra ones,
 * nullables as `anyOf` with null, enums, literals, unions, arrays, nested and shared objects,
 * and a recursive one (`$ref` into `definitions`/`$defs`). */
const Pet = z.object({
  name: z.string().min(2).max(20),
  age: z.number().int().min(0).nullable(),
  weight: z.number().positive(),
  kind: z.enum(["cat", "dog", "parrot"]),
  vaccinated: z.boolean(),
  tags: z.array(z.string()).min(1),
  home: Address,
  work: Address.nullable(),
  toy: z.discriminatedUnion("type", [
    z.object({ type: z.literal("ball"), size: z.number() }),
    z.object({ type: z.literal("rope"), length: z.number().int() }),
  ]),
  owner: Person,
  sitter: Person.nullable(),
  contact: z.email(),
  born: z.iso.date(),
  seen: z.iso.datetime(),
  id: z.uuid(),
});

function text(result: CanonicalResult): string {
  const part = result.parts[0];
  assert.equal(part?.type, "text", JSON.stringify(result.parts));
  return part?.type === "text" ? part.text : "";
}

/** The simulator's answer for `schema` as a strict json_schema output, checked against the
 * schema and parsed by the client's zod schema. */
async function answer(schema: Record<string, unknown>, name: string): Promise<unknown> {
  const req = chatRequest({
    model: "sim-chat",
    messages: [{ role: "user", parts: [{ type: "text", text: "Describe a pet." }] }],
  }, { output: { type: "json_schema", name, schema, strict: true } });
  const result = await simulateChat(req, callContext(MODEL), OPTIONS);
  assert.equal(result.finish, "stop");
  const value = JSON.parse(text(result));
  assert.deepEqual(schemaErrors(schema, value), []);
  return value;
}

Deno.test("openai zodResponseFormat (.parse()): the answer parses with the zod schema", async () => {
  const format = zodResponseFormat(Pet, "pet");
  const schema = format.json_schema.schema as Record<string, unknown>;
  assert.equal(schema.additionalProperties, false);
  Pet.parse(await answer(schema, format.json_schema.name));
});

Deno.test("AI SDK zodSchema (generateObject): the answer parses with the zod schema", async () => {
  const schema = await zodSchema(Pet).jsonSchema as Record<string, unknown>;
  Pet.parse(await answer(schema, "response"));
});

Deno.test("LangChain toJsonSchema (withStructuredOutput): the answer parses", async () => {
  const schema = toJsonSchema(Pet) as Record<string, unknown>;
  Pet.parse(await answer(schema, "extract"));
});

Deno.test("openai zodFunction: strict tool arguments parse with the zod schema", async () => {
  const tool = zodFunction({ name: "register_pet", parameters: Pet });
  const { name, parameters, strict } = tool.function;
  const req = chatRequest({
    messages: [{ role: "user", parts: [{ type: "text", text: "Please register_pet." }] }],
  }, { tools: [{ name, parameters: parameters as Record<string, unknown>, strict: strict! }] });
  const result = await simulateChat(req, callContext(MODEL), OPTIONS);
  assert.equal(result.finish, "tool_calls");
  const call = result.parts[0]!;
  assert.equal(call.type, "tool_call");
  if (call.type !== "tool_call") return;
  assert.equal(call.name, "register_pet");
  Pet.parse(JSON.parse(call.arguments));
});

Deno.test("a Pydantic-style schema ($defs, enum and object refs, nullable ref) is met", async () => {
  const schema = {
    $defs: {
      Kind: { enum: ["cat", "dog"], title: "Kind", type: "string" },
      Address: {
        properties: { street: { title: "Street", type: "string" } },
        required: ["street"],
        title: "Address",
        type: "object",
        additionalProperties: false,
      },
    },
    properties: {
      name: { title: "Name", type: "string" },
      kind: { $ref: "#/$defs/Kind" },
      home: { $ref: "#/$defs/Address" },
      work: { anyOf: [{ $ref: "#/$defs/Address" }, { type: "null" }], default: null },
      scores: { items: { type: "number" }, title: "Scores", type: "array" },
    },
    required: ["name", "kind", "home", "work", "scores"],
    title: "Pet",
    type: "object",
    additionalProperties: false,
  };
  const value = await answer(schema, "Pet");
  assert.deepEqual(Object.keys(value as object), ["name", "kind", "home", "work", "scores"]);
});
