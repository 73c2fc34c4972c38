import assert from "node:assert/strict";
import { readRerankRequest, rerankModelId } from "../../../src/api/rerank/request.ts";
import { ApiError } from "../../../src/errors.ts";

const SETTINGS = { max_documents: 3, max_document_tokens: 4 };

/** The 400's param, code and message of `f`. */
function rejected(
  f: () => unknown,
): { param: string | null; code: string | null; message: string } {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof ApiError, String(e));
    assert.equal(e.status, 400);
    return { param: e.param, code: e.code, message: e.message };
  }
  assert.fail("no error");
}

const read = (body: Record<string, unknown>) => readRerankRequest(body, "rr", SETTINGS);

Deno.test("readRerankRequest: strings and {text} objects, top_n and return_documents", () => {
  assert.deepEqual(read({ model: "rr", query: "q", documents: ["a", { text: "b", id: 7 }] }), {
    model: "rr",
    query: "q",
    documents: ["a", "b"],
    top_n: null,
    return_documents: false,
  });
  assert.deepEqual(
    read({ query: "q", documents: ["a"], top_n: 3, return_documents: true, rank_fields: [] }),
    { model: "rr", query: "q", documents: ["a"], top_n: 3, return_documents: true },
  );
  // null is leaving a field out, as on the other endpoints.
  assert.equal(read({ query: "q", documents: ["a"], top_n: null }).top_n, null);
  assert.equal(rerankModelId({ model: "rr" }), "rr");
});

Deno.test("readRerankRequest: each error names its parameter", () => {
  const cases: [Record<string, unknown>, string, string, RegExp][] = [
    [{ documents: ["a"] }, "query", "missing_required_parameter", /'query'/],
    [{ query: "", documents: ["a"] }, "query", "invalid_value", /'query'/],
    [{ query: 3, documents: ["a"] }, "query", "invalid_type", /'query'/],
    [{ query: "q".repeat(17), documents: ["a"] }, "query", "invalid_value", /at most 4 tokens/],
    [{ query: "q" }, "documents", "missing_required_parameter", /'documents'/],
    [{ query: "q", documents: [] }, "documents", "invalid_value", /at least 1 item/],
    [{ query: "q", documents: "a" }, "documents", "invalid_type", /an array/],
    [
      { query: "q", documents: ["a", "b", "c", "d"] },
      "documents",
      "invalid_value",
      /at most 3 documents in a request, but got 4/,
    ],
    [{ query: "q", documents: ["a", ""] }, "documents[1]", "invalid_value", /'documents\[1\]'/],
    [
      { query: "q", documents: ["a", 5] },
      "documents[1]",
      "invalid_type",
      /a string or an object with a text field/,
    ],
    [
      { query: "q", documents: [{ txt: "a" }] },
      "documents[0].text",
      "missing_required_parameter",
      /text/,
    ],
    [
      { query: "q", documents: ["ok", "x".repeat(17)] },
      "documents[1]",
      "invalid_value",
      /at most 4 tokens \(four characters a token\), but got 17 characters/,
    ],
    [
      { query: "q", documents: [{ text: "x".repeat(17) }] },
      "documents[0].text",
      "invalid_value",
      /at most 4 tokens/,
    ],
    [{ query: "q", documents: ["a"], top_n: 0 }, "top_n", "invalid_value", /from 1 to 3/],
    [{ query: "q", documents: ["a"], top_n: 4 }, "top_n", "invalid_value", /from 1 to 3/],
    [{ query: "q", documents: ["a"], top_n: 1.5 }, "top_n", "invalid_type", /'top_n'/],
    [
      { query: "q", documents: ["a"], return_documents: "yes" },
      "return_documents",
      "invalid_type",
      /'return_documents'/,
    ],
  ];
  for (const [body, param, code, message] of cases) {
    const error = rejected(() => read(body));
    assert.equal(error.param, param, JSON.stringify(body));
    assert.equal(error.code, code, JSON.stringify(body));
    assert.match(error.message, message);
  }
  assert.equal(rejected(() => rerankModelId({ query: "q" })).param, "model");
});
