import assert from "node:assert/strict";
import { MODERATION_CATEGORIES } from "../../src/config/types.ts";
import type { CanonicalRequest, Part } from "../../src/canonical/conversation.ts";
import { ApiError } from "../../src/errors.ts";
import {
  GUARD_PROMPT,
  guardModerate,
  guardRequest,
  parseGuardAnswer,
} from "../../src/moderation/guard.ts";
import type { Provider } from "../../src/providers/types.ts";
import { callContext } from "../support/provider_call.ts";

const flagged = (answer: string) => {
  const scores = parseGuardAnswer(answer);
  assert.ok(scores, `unparsed: ${answer}`);
  return Object.entries(scores).filter(([, v]) => v >= 0.5).map(([k]) => k).sort();
};

Deno.test("parseGuardAnswer: a strict JSON object", () => {
  const scores = parseGuardAnswer(
    JSON.stringify(Object.fromEntries(MODERATION_CATEGORIES.map((c, i) => [c, i / 20]))),
  )!;
  assert.deepEqual(Object.keys(scores), [...MODERATION_CATEGORIES]);
  assert.equal(scores["hate/threatening"], 0.25);
  assert.equal(scores.violence, 0.5);
  assert.equal(scores.hate, 0.25); // said 0.05, lifted to its subcategory's score
});

Deno.test("parseGuardAnswer: JSON in a fence, with prose, nested, or with other key spellings", () => {
  assert.deepEqual(flagged('```json\n{"violence": 0.9, "hate": 0.1}\n```'), ["violence"]);
  assert.deepEqual(flagged('Here is my answer: {"hate": 0.7}. Hope it helps.'), ["hate"]);
  assert.deepEqual(
    flagged('{"flagged": true, "category_scores": {"sexual": 0.95}, "categories": {}}'),
    ["sexual"],
  );
  assert.deepEqual(
    flagged('{"Self_Harm_Intent": 0.8, "HARASSMENT / threatening": "0.6", "illicit": 0.99}'),
    ["harassment", "harassment/threatening", "self-harm", "self-harm/intent"],
  );
  assert.deepEqual(flagged('{"violence": true, "hate": false}'), ["violence"]);
});

Deno.test("parseGuardAnswer: Llama Guard verdicts", () => {
  assert.deepEqual(flagged("safe"), []);
  assert.deepEqual(flagged("  Safe.\n"), []);
  assert.deepEqual(flagged("unsafe\nS1,S10"), ["hate", "violence"]);
  assert.deepEqual(flagged("unsafe\nS4"), ["sexual", "sexual/minors"]);
  assert.deepEqual(flagged("unsafe\nS11, S12"), ["self-harm", "sexual"]);
  assert.deepEqual(flagged("unsafe\nS2"), []); // a hazard outside the 11 categories
  assert.deepEqual(flagged("unsafe\nviolence, hate/threatening"), [
    "hate",
    "hate/threatening",
    "violence",
  ]);
});

Deno.test("parseGuardAnswer: anything else is null (a 502 upstream), never 'not flagged'", () => {
  for (
    const answer of [
      "",
      "I can't help with that.",
      "unsafe",
      "unsafe\nsomething weird",
      '{"verdict": "ok"}',
      '{"violence": 3}',
      '{"violence": "high"}',
      "[0.1, 0.2]",
      "{not json}",
    ]
  ) {
    assert.equal(parseGuardAnswer(answer), null, answer);
  }
});

Deno.test("guardRequest: the guard prompt, the content, images as data parts", () => {
  const text = guardRequest({ text: "hello", images: [] }, "m");
  assert.equal(text.model, "m");
  assert.equal(text.stream, false);
  assert.equal(text.options.temperature, 0);
  assert.equal(text.options.maxTokens, 300);
  assert.deepEqual(text.options.output, { type: "text" });
  assert.deepEqual(text.options.tools, []);
  assert.deepEqual(text.messages[0], {
    role: "system",
    parts: [{ type: "text", text: GUARD_PROMPT }],
  });
  assert.deepEqual(text.messages[1], {
    role: "user",
    parts: [{ type: "text", text: "Content to classify:\n<content>\nhello\n</content>" }],
  });
  const withImage = guardRequest({
    text: "look",
    images: ["data:image/png;base64,AAAA", "data:IMAGE/JPEG;name=a.jpg;base64,BB\nBB"],
  }, "m");
  assert.deepEqual(withImage.messages[1], {
    role: "user",
    parts: [
      { type: "text", text: "Content to classify:\n<content>\nlook\n</content>" },
      { type: "image", source: { kind: "data", mediaType: "image/png", base64: "AAAA" } },
      { type: "image", source: { kind: "data", mediaType: "image/jpeg", base64: "BBBB" } },
    ],
  });
});

/** Moderates `input` through a fake chat model that answers `answer` (as `parts`). */
function moderate(parts: Part[], input = ["some text"]) {
  const seen: CanonicalRequest[] = [];
  const provider: Provider = {
    id: "guard",
    chat(req) {
      seen.push(req);
      return Promise.resolve({ parts, finish: "stop", usage: { input: 1, output: 1 } });
    },
    // deno-lint-ignore require-yield
    async *chatStream() {
      throw new Error("not streamed");
    },
  };
  const results = guardModerate(provider, { model: "g", input, input_images: [] }, callContext());
  return { results, seen };
}

Deno.test("guardModerate: reads the text parts of the canonical result", async () => {
  const { results, seen } = moderate([
    { type: "reasoning", text: 'thinking about {"violence": 1}', style: "simulator" },
    { type: "text", text: '{"violence": ' },
    { type: "text", text: "0.9}" },
  ], ["a", "b"]);
  const [a, b] = await results;
  assert.equal(a!.flagged, true);
  assert.equal(a!.category_scores.violence, 0.9);
  assert.equal(b!.categories.violence, true);
  assert.equal(seen.length, 2);
  assert.deepEqual(seen.map((r) => r.model), ["gw-model", "gw-model"]);
});

Deno.test("guardModerate: an answer with no readable text is a 502", async () => {
  const { results } = moderate([{ type: "refusal", text: "I can't help with that." }]);
  await assert.rejects(
    results,
    (e: unknown) =>
      e instanceof ApiError && e.status === 502 && /not a classification/.test(e.message),
  );
});
