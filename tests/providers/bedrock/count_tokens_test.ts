import assert from "node:assert/strict";
import { foundationModel } from "../../../src/providers/bedrock/count_tokens.ts";

Deno.test("foundationModel: a system-defined inference profile counts as its foundation model; other ids as they are", () => {
  const cases: [string, string][] = [
    ["us.anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic.claude-sonnet-4-5-20250929-v1:0"],
    ["global.anthropic.claude-haiku-4-5-20251001-v1:0", "anthropic.claude-haiku-4-5-20251001-v1:0"],
    [
      "us-gov.anthropic.claude-3-5-sonnet-20240620-v1:0",
      "anthropic.claude-3-5-sonnet-20240620-v1:0",
    ],
    ["apac.amazon.nova-pro-v1:0", "amazon.nova-pro-v1:0"],
    ["anthropic.claude-3-5-haiku-20241022-v1:0", "anthropic.claude-3-5-haiku-20241022-v1:0"],
    ["meta.llama3-1-8b-instruct-v1:0", "meta.llama3-1-8b-instruct-v1:0"],
    ["qwen.qwen3-32b-v1:0", "qwen.qwen3-32b-v1:0"],
    [
      "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3",
      "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3",
    ],
  ];
  for (const [id, foundation] of cases) assert.equal(foundationModel(id), foundation, id);
});
