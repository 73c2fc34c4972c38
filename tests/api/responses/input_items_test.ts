/**
 * `GET /v1/responses/{id}/input_items` end to end (the `openai` client and raw fetch on a real
 * port): OpenAI's paging (`limit` 1-100 default 20, `order` default `desc`, `after`,
 * `has_more`, `first_id`, `last_id`), items listed as typed items whatever form they were
 * sent in, every page valid against OpenAI's `ResponseItemList`, and a bad or unknown query
 * parameter a 400 naming it.
 */
import assert from "node:assert/strict";
import type { ResponseInputItem } from "npm:openai@7.55.0/resources/responses/responses";
import { OpenAISchemas } from "./openapi_schema.ts";
import { startResponsesGateway, TARGETS } from "./gateway.ts";

const schemas = await OpenAISchemas.load();

/** 25 items: shorthand and typed messages of every role, a function call and its output. */
const INPUT: ResponseInputItem[] = [
  { role: "developer", content: "Be brief." },
  { role: "user", content: "first" },
  { role: "assistant", content: "an answer" },
  // Without the annotations the SDK's types ask for, as a raw client may send it.
  {
    type: "message",
    role: "assistant",
    content: [{ type: "output_text", text: "typed" }],
  } as unknown as ResponseInputItem,
  { type: "function_call", call_id: "c1", name: "get_weather", arguments: "{}" },
  { type: "function_call_output", call_id: "c1", output: "18C" },
  ...Array.from({ length: 19 }, (_, i) => ({ role: "user" as const, content: `message ${i}` })),
];

const TOOLS = [{ type: "function" as const, name: "get_weather", parameters: null, strict: false }];

Deno.test("input items: OpenAI's pages, typed items, on every back end", async () => {
  await using gw = await startResponsesGateway();
  const client = gw.client();
  for (const target of TARGETS) {
    const made = await client.responses.create({
      model: target.model,
      input: INPUT,
      tools: TOOLS,
    });
    const url = `${gw.baseURL}/responses/${made.id}/input_items`;
    const list = async (query: string) => {
      const res = await fetch(`${url}${query}`, {
        headers: { authorization: `Bearer ${gw.apiKey}` },
      });
      const body = await res.json();
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.deepEqual(schemas.errors("ResponseItemList", body), [], `${target.name} ${query}`);
      return body as { data: Record<string, unknown>[]; [k: string]: unknown };
    };

    // The default page: the newest 20, more to come.
    const first = await list("");
    assert.equal(first.data.length, 20, target.name);
    assert.equal(first.has_more, true);
    assert.equal(first.first_id, first.data[0]!.id);
    assert.equal(first.last_id, first.data[19]!.id);
    assert.deepEqual(first.data[0]!.content, [{ type: "input_text", text: "message 18" }]);

    // Oldest first, 4 at a time: items as OpenAI lists them.
    const page = await list("?order=asc&limit=4");
    assert.equal(page.has_more, true);
    const ids = page.data.map((item) => item.id);
    assert.deepEqual(page.data.map(({ id: _, ...item }) => item), [
      {
        type: "message",
        role: "developer",
        content: [{ type: "input_text", text: "Be brief." }],
        status: "completed",
      },
      {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: "first" }],
        status: "completed",
      },
      {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: "an answer", annotations: [], logprobs: [] }],
        status: "completed",
      },
      {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: "typed", annotations: [], logprobs: [] }],
        status: "completed",
      },
    ]);
    assert.equal(new Set(ids).size, 4);
    const next = await list(`?order=asc&limit=2&after=${ids[3]}`);
    assert.deepEqual(next.data.map((item) => [item.type, item.status]), [
      ["function_call", "completed"],
      ["function_call_output", "completed"],
    ]);
    // The last page.
    const last = await list(`?limit=100&after=${first.last_id}`);
    assert.equal(last.data.length, 5);
    assert.equal(last.has_more, false);
    assert.equal(last.data.at(-1)!.role, "developer");

    // The client's auto-pagination walks every page, after the last id of each.
    const all = [];
    for await (const item of client.responses.inputItems.list(made.id, { limit: 7 })) {
      all.push(item);
    }
    assert.equal(all.length, INPUT.length, target.name);
    assert.equal(new Set(all.map((item) => item.id)).size, INPUT.length, "ids are unique");
    assert.deepEqual(
      all.slice().reverse().slice(0, 4).map((item) => item.id),
      ids,
      `${target.name}: desc pages are the asc order reversed`,
    );
  }
});

Deno.test("input items: a bad or unknown query parameter is a 400 naming it", async () => {
  await using gw = await startResponsesGateway();
  const client = gw.client();
  const made = await client.responses.create({ model: "sim-vision", input: "Hello" });
  const url = `${gw.baseURL}/responses/${made.id}/input_items`;
  const cases: [string, string, string][] = [
    ["limit=0", "limit", "invalid_value"],
    ["limit=101", "limit", "invalid_value"],
    ["limit=1.5", "limit", "invalid_value"],
    ["limit=", "limit", "invalid_value"],
    ["order=newest", "order", "invalid_value"],
    ["after=msg_unknown", "after", "invalid_value"],
    ["include[]=message.input_image.image_url&include[]=everything", "include[]", "invalid_value"],
    ["colour=red", "colour", "unknown_parameter"],
  ];
  for (const [query, param, code] of cases) {
    const res = await fetch(`${url}?${query}`, {
      headers: { authorization: `Bearer ${gw.apiKey}` },
    });
    const body = await res.json();
    assert.equal(res.status, 400, `${query}: ${JSON.stringify(body)}`);
    assert.equal(body.error.param, param, query);
    assert.equal(body.error.code, code, query);
    assert.equal(body.error.type, "invalid_request_error");
  }
  // OpenAI's `include` is taken (image URLs are always listed).
  const items = await client.responses.inputItems.list(made.id, {
    include: ["message.input_image.image_url"],
    limit: 100,
    order: "asc",
  });
  assert.deepEqual(items.data.map((item) => item.type), ["message"]);
});
