/**
 * A body nested deeper than the limit is a 400 naming where, on every front door in its own
 * error shape, before anything walks it: `JSON.parse` takes any depth, but `JSON.stringify`
 * (the Responses API echoes `tools`, every provider forwards the body) ran out of stack near
 * 7,000 levels and answered 500.
 */
import assert from "node:assert/strict";
import { MAX_DEPTH } from "../src/validation/depth.ts";
import { startServer } from "./support/server.ts";

/** `{"a": ... {} ...}`, `levels` objects deep, as text (too deep for JSON.stringify). */
function nestedText(levels: number): string {
  return '{"a":'.repeat(levels - 1) + "{}" + "}".repeat(levels - 1);
}

/** A tool whose parameters nest `levels` objects (the parameters object is level 1). */
const toolText = (levels: number) =>
  `{"type":"object","properties":{"x":${nestedText(levels - 2)}}}`;

const post = (url: string, body: string) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body,
  });

Deno.test("a body nested 7,000 levels deep is a 400 naming the field on every front door", async () => {
  await using server = await startServer();
  const tool = toolText(7000);
  const requests = {
    "/v1/responses":
      `{"model":"sim-vision","input":"x","tools":[{"type":"function","name":"f","parameters":${tool}}]}`,
    "/v1/chat/completions":
      `{"model":"sim-vision","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":${tool}}}]}`,
    "/v1/messages":
      `{"model":"sim-vision","max_tokens":10,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":${tool}}]}`,
  };
  for (const [path, body] of Object.entries(requests)) {
    const res = await post(server.url + path, body);
    const json = await res.json();
    assert.equal(res.status, 400, `${path}: ${JSON.stringify(json).slice(0, 300)}`);
    assert.match(json.error.message, new RegExp(`more than ${MAX_DEPTH} levels deep`), path);
    if (path === "/v1/messages") {
      assert.equal(json.type, "error");
      assert.match(json.error.message, /^tools\.0\.input_schema\.properties\.x\.a\.a/);
    } else {
      assert.equal(json.error.code, "invalid_json", path);
      assert.match(json.error.param, /properties\.x\.a\.a/, path);
    }
  }
});

Deno.test("a body at the nesting limit is answered", async () => {
  await using server = await startServer();
  // The body, tools, the tool, function and parameters take 5 levels; parameters is level 5.
  const tool = toolText(MAX_DEPTH - 4);
  const body =
    `{"model":"sim-vision","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":${tool}}}]}`;
  const res = await post(server.url + "/v1/chat/completions", body);
  assert.equal(res.status, 200, (await res.clone().text()).slice(0, 300));
  await res.body?.cancel();
  const over = await post(
    server.url + "/v1/chat/completions",
    body.replace('{"x":', '{"x":{"a":') + "}",
  );
  assert.equal(over.status, 400);
  await over.body?.cancel();
});
