import assert from "node:assert/strict";
import { boundRecord, truncateText } from "../../src/log/record.ts";
import { makeLogRecord } from "../support/log_records.ts";

Deno.test("boundRecord cuts every text field a caller can fill to its bound, with a length marker", () => {
  const long = (n: number) => "a".repeat(n);
  const bounded = boundRecord(makeLogRecord({
    request_id: long(1000),
    method: long(1000),
    path: "/" + long(70_000),
    ip: long(1000),
    key_id: long(1000),
    model: long(3000),
    provider: long(1000),
    error: long(1000),
  }));
  const limits = {
    request_id: 64,
    method: 32,
    path: 256,
    ip: 64,
    key_id: 64,
    model: 128,
    provider: 128,
    error: 128,
  } as const;
  for (const [field, max] of Object.entries(limits)) {
    const value = bounded[field as keyof typeof limits]!;
    assert.equal(value.length, max, field);
    assert.match(value, /^\/?a+…\[\d+ chars\]$/, field);
  }
  assert.ok(bounded.path.endsWith("…[70001 chars]"));
  assert.ok(bounded.model!.endsWith("…[3000 chars]"));
});

Deno.test("boundRecord returns a record within its bounds as it is", () => {
  const record = makeLogRecord({ model: "m".repeat(128), path: "/" + "p".repeat(255) });
  assert.equal(boundRecord(record), record);
  const cut = boundRecord({ ...record, model: "m".repeat(129) });
  assert.notEqual(cut, record);
  assert.equal(cut.path, record.path);
  assert.equal(record.model, "m".repeat(128), "the input is not changed");
});

Deno.test("truncateText keeps short text and never splits a surrogate pair", () => {
  assert.equal(truncateText("short", 20), "short");
  assert.equal(truncateText("x".repeat(20), 20), "x".repeat(20));
  const emoji = "😀".repeat(100);
  for (let max = 20; max < 40; max++) {
    const cut = truncateText(emoji, max);
    assert.ok(cut.length <= max, `${max}`);
    assert.ok(cut.isWellFormed(), `${max}`);
    assert.ok(cut.endsWith("…[200 chars]"));
  }
});
