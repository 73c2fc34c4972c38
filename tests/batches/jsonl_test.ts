import assert from "node:assert/strict";
import { checkBatchFile, parseLine } from "../../src/batches/jsonl.ts";

const encode = (text: string) => new TextEncoder().encode(text);
const line = (id: string, url = "/v1/chat/completions", extra: Record<string, unknown> = {}) =>
  JSON.stringify({ custom_id: id, method: "POST", url, body: { model: "m" }, ...extra });

Deno.test("checkBatchFile: good lines give their byte spans (CRLF and blank lines too)", () => {
  const text = `${line("a")}\r\n\n${line("é", "/v1/embeddings")}\n`;
  const bytes = encode(text);
  const { spans, errors } = checkBatchFile(bytes, 10);
  assert.deepEqual(errors, []);
  assert.equal(spans.length, 2);
  assert.equal(
    parseLine(bytes.subarray(spans[0]!.offset, spans[0]!.offset + spans[0]!.length)).custom_id,
    "a",
  );
  const second = parseLine(bytes.subarray(spans[1]!.offset, spans[1]!.offset + spans[1]!.length));
  assert.deepEqual(second, { custom_id: "é", url: "/v1/embeddings", body: { model: "m" } });
});

Deno.test("checkBatchFile: every bad line is named by its number", () => {
  const text = [
    line("a"),
    "[1, 2]",
    line("b", "/v1/images/generations"),
    JSON.stringify({ custom_id: "c", method: "POST", url: "/v1/embeddings", body: "x" }),
    line("a"),
    line("d", "/v1/chat/completions", { extra: 1 }),
    JSON.stringify({
      custom_id: "e",
      method: "POST",
      url: "/v1/chat/completions",
      body: { stream: true },
    }),
    JSON.stringify({ method: "POST", url: "/v1/embeddings", body: {} }),
  ].join("\n");
  const { errors } = checkBatchFile(encode(text), 100);
  assert.deepEqual(errors.map((e) => e.line), [2, 3, 4, 5, 6, 7, 8]);
  assert.match(errors[1]!.message, /^url: /);
  assert.match(errors[2]!.message, /^body: /);
  assert.match(errors[3]!.message, /custom_id "a" is used by an earlier line/);
  assert.match(errors[4]!.message, /extra/);
  assert.match(errors[5]!.message, /^body\.stream: /);
  assert.match(errors[6]!.message, /^custom_id: /);
});

Deno.test("checkBatchFile: an empty file and one over max_lines are refused", () => {
  assert.deepEqual(checkBatchFile(encode("\n\n"), 10).errors, [
    { line: 1, message: "the file has no lines" },
  ]);
  const three = [line("a"), line("b"), line("c")].join("\n");
  assert.deepEqual(checkBatchFile(encode(three), 2).errors, [
    { line: 3, message: "the file has more than 2 lines" },
  ]);
});
