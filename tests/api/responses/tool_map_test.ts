import assert from "node:assert/strict";
import { customArguments, customInput, ToolMap } from "../../../src/api/responses/tool_map.ts";

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

Deno.test("tool map: plain names are their own; namespaced ones are namespace__name, both ways", () => {
  const map = new ToolMap();
  assert.equal(map.add({ kind: "function", name: "exec_command" }), "exec_command");
  assert.equal(map.add({ kind: "custom", name: "apply_patch" }), "apply_patch");
  const spawn = map.add({ kind: "function", name: "spawn_agent", namespace: "multi_agent_v1" });
  assert.equal(spawn, "multi_agent_v1__spawn_agent");
  assert.deepEqual(map.wire(spawn), {
    kind: "function",
    name: "spawn_agent",
    namespace: "multi_agent_v1",
  });
  assert.deepEqual(map.wire("apply_patch"), { kind: "custom", name: "apply_patch" });
  assert.equal(map.canonical("spawn_agent", "multi_agent_v1"), spawn);
  assert.equal(map.canonical("exec_command"), "exec_command");
  // A name the map lacks is a plain function of that name.
  assert.deepEqual(map.wire("other"), { kind: "function", name: "other" });
});

Deno.test("tool map: a flattened name that is taken or too long gets a hash, within 64 characters", () => {
  const map = new ToolMap();
  map.add({ kind: "function", name: "crm__find" });
  const nested = map.add({ kind: "function", name: "find", namespace: "crm" });
  assert.notEqual(nested, "crm__find");
  assert.match(nested, NAME);
  assert.deepEqual(map.wire(nested), { kind: "function", name: "find", namespace: "crm" });
  assert.equal(map.canonical("find", "crm"), nested);

  const long = map.add({ kind: "function", name: "f".repeat(60), namespace: "n".repeat(60) });
  assert.match(long, NAME);
  const other = map.add({
    kind: "function",
    name: `${"f".repeat(59)}g`,
    namespace: "n".repeat(60),
  });
  assert.match(other, NAME);
  assert.notEqual(long, other);
  assert.equal(map.wire(other).name, `${"f".repeat(59)}g`);
  // The same tool gets the same name in every request (its calls come back across turns).
  const again = new ToolMap();
  again.add({ kind: "function", name: "crm__find" });
  assert.equal(again.add({ kind: "function", name: "find", namespace: "crm" }), nested);
  // A namespaced call of a tool no longer declared still gets a valid name.
  assert.match(new ToolMap().canonical("g".repeat(64), "ns"), NAME);
});

Deno.test("custom tools: the input is the one string argument, both ways", () => {
  assert.equal(customArguments("*** Begin Patch\n"), '{"input":"*** Begin Patch\\n"}');
  assert.equal(customInput('{"input":"ls -la"}'), "ls -la");
  // A model that wrote something else: the arguments as written.
  assert.equal(customInput("not json"), "not json");
  assert.equal(customInput('{"other":1}'), '{"other":1}');
});
