import assert from "node:assert/strict";
import type { CanonicalEvent } from "../../src/canonical/events.ts";
import { continuation, PartialAnswer, prefilled } from "../../src/routing/continuation.ts";
import { chatRequest } from "../support/provider_call.ts";

const text = (index: number, t: string): CanonicalEvent => ({
  type: "block_delta",
  index,
  delta: { type: "text", text: t },
});

Deno.test("continuation: the continued text goes on in the open block, the client's whitespace not repeated", () => {
  const partial = new PartialAnswer();
  partial.add([{ type: "start" }, { type: "block_start", index: 0, block: { type: "text" } }]);
  partial.add([text(0, "Once upon "), text(0, "a time ")]);
  assert.equal(partial.continuable, true);
  const req = prefilled(chatRequest(), partial);
  const last = req.messages.at(-1)!;
  assert.equal(last.role, "assistant");
  assert.deepEqual(last.parts, [{ type: "text", text: "Once upon a time" }]);
  const renumber = continuation(partial);
  assert.deepEqual(
    renumber([{ type: "start" }, { type: "block_start", index: 0, block: { type: "text" } }]),
    [],
  );
  // The prefill ended at "time"; the route goes on with " there was…": the space the client
  // already has is dropped.
  assert.deepEqual(renumber([text(0, " there"), text(0, " was")]), [
    text(0, "there"),
    text(0, " was"),
  ]);
  assert.deepEqual(
    renumber([{ type: "block_stop", index: 0 }, { type: "finish", reason: "stop" }]),
    [
      { type: "block_stop", index: 0 },
      { type: "finish", reason: "stop" },
    ],
  );
});

Deno.test("continuation: a tool call first closes the open text block and comes after it", () => {
  const partial = new PartialAnswer();
  partial.add([
    { type: "block_start", index: 0, block: { type: "text" } },
    text(0, "Let me check."),
  ]);
  const renumber = continuation(partial);
  assert.deepEqual(
    renumber([{ type: "block_start", index: 0, block: { type: "tool_call", id: "c", name: "f" } }]),
    [
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "tool_call", id: "c", name: "f" } },
    ],
  );
});

Deno.test("continuation: reasoning, tool calls or a finished answer cannot be continued", () => {
  const reasoning = new PartialAnswer();
  reasoning.add([{ type: "block_start", index: 0, block: { type: "reasoning" } }]);
  assert.equal(reasoning.continuable, false);
  const finished = new PartialAnswer();
  finished.add([{ type: "finish", reason: "stop" }]);
  assert.equal(finished.continuable, false);
});
