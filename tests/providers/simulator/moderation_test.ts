import assert from "node:assert/strict";
import type { ModelRecord } from "../../../src/catalogue/model.ts";
import { MODERATION_CATEGORIES } from "../../../src/config/types.ts";
import {
  classify,
  compileLexicon,
  matchStarts,
  scoreText,
} from "../../../src/providers/simulator/moderation.ts";
import { LEXICON } from "../../../src/providers/simulator/moderation_lexicon.ts";
import { pngUrl } from "../../support/image_fixtures.ts";

const LEX = compileLexicon(LEXICON);

const flagged = (text: string) =>
  Object.entries(scoreText(LEX, text)).filter(([, v]) => v >= 0.5).map(([k]) => k).sort();

Deno.test("scoreText: harmless text scores 0 everywhere", () => {
  for (const text of ["Hello, how are you?", "The quick brown fox", "I love my neighbours", ""]) {
    assert.deepEqual(Object.values(scoreText(LEX, text)), new Array(11).fill(0), text);
  }
});

Deno.test("scoreText: each category has text that flags it", () => {
  const cases: [string, string[]][] = [
    ["I will kill you", ["harassment", "harassment/threatening", "violence"]],
    ["you are such a worthless idiot", ["harassment"]],
    ["immigrants are vermin", ["hate"]],
    ["death to all muslims", ["hate", "hate/threatening", "violence"]],
    ["I want to kill myself", ["self-harm", "self-harm/intent"]],
    ["how do i overdose", ["self-harm", "self-harm/instructions"]],
    ["let's watch porn and have sex", ["sexual"]],
    ["naked pictures of a child", ["sexual", "sexual/minors"]],
    ["he was dismembered, a pool of blood everywhere", ["violence", "violence/graphic"]],
  ];
  for (const [text, expected] of cases) assert.deepEqual(flagged(text), expected, text);
});

Deno.test("scoreText: obfuscated spellings score like plain ones", () => {
  const plain = scoreText(LEX, "I will kill you");
  for (
    const text of [
      "I w1ll k1ll y0u",
      "i will k.i.l.l you",
      "I will k i l l you",
      "i will kiiiill you",
    ]
  ) {
    assert.deepEqual(scoreText(LEX, text), plain, text);
  }
});

Deno.test("scoreText: negation and benign contexts lower the score", () => {
  assert.deepEqual(flagged("I would never hurt you"), []);
  assert.deepEqual(flagged("I don't want to kill myself"), []);
  assert.deepEqual(flagged("kill the process and restart the server"), []);
  assert.deepEqual(flagged("he had a heart attack"), []);
  assert.deepEqual(flagged("sex education for kids"), []);
  assert.ok(
    scoreText(LEX, "I would never hurt you").violence < scoreText(LEX, "I will hurt you").violence,
  );
});

Deno.test("scoreText: more evidence, higher score, never above 1", () => {
  const one = scoreText(LEX, "stupid").harassment;
  const more = scoreText(LEX, "you are stupid, stupid, stupid").harassment;
  assert.ok(one > 0 && one < 0.5);
  assert.ok(more > one && more <= 1);
  const extreme = scoreText(
    LEX,
    "kill kill kill you you i will kill you die die death to all jews",
  );
  for (const c of MODERATION_CATEGORIES) assert.ok(extreme[c] >= 0 && extreme[c] <= 1);
});

/** Where the matches of one pattern start in a canonical text. */
const starts = (pattern: string, text: string) =>
  matchStarts(compileLexicon([{ pattern, weights: {} }]), text)[0]!;

Deno.test("every lexicon pattern compiles and matches its own first phrase", () => {
  for (const { pattern } of LEXICON) {
    const sample = pattern.split(" + ").filter((s) => s !== "~" && !s.endsWith("?"))
      .map((slot) => slot.split("|")[0]!).join(" ");
    if (sample.includes("@")) continue; // groups: covered by the category tests
    const text = sample.replaceAll("*", "");
    assert.deepEqual(starts(pattern, text), [0], `${pattern} does not match "${text}"`);
  }
  assert.throws(() => compileLexicon([{ pattern: "@nosuchgroup", weights: {} }]), /unknown/);
  assert.throws(() => compileLexicon([{ pattern: "Bad!", weights: {} }]), /invalid lexicon word/);
  assert.throws(() => compileLexicon([{ pattern: "a?", weights: {} }]), /matches empty text/);
});

Deno.test("matchStarts: the pattern syntax of moderation_lexicon.ts", () => {
  // Letter runs, `*` endings, whole words only.
  assert.deepEqual(starts("kill", "kiiiilll"), [0]);
  assert.deepEqual(starts("kill", "kil"), []);
  assert.deepEqual(starts("kill", "skill kills"), []);
  assert.deepEqual(starts("kill*", "so killing"), [3]);
  // Slots and the words of a phrase: spaced or glued; "?" slots; "~" is up to three words.
  assert.deepEqual(starts("i will + kill", "iwillkill i will kill"), [0, 10]);
  assert.deepEqual(starts("a + b? + c", "a c a b c a bc"), [0, 4, 10]);
  assert.deepEqual(starts("sex + ~ + kid*", "sex kids"), [0]);
  assert.deepEqual(starts("sex + ~ + kid*", "sex a b c kids"), [0]);
  assert.deepEqual(starts("sex + ~ + kid*", "sex a b c d kids"), []);
  // Groups; leftmost matches that do not overlap, at most three.
  assert.deepEqual(starts("@iwill + die", "well die"), [0]);
  assert.deepEqual(starts("kill + kill", "kill kill kill"), [0]);
  assert.deepEqual(starts("kill", "kill kill kill kill"), [0, 5, 10]);
});

Deno.test("scoreText: inputs that made RegExps backtrack for seconds score like short ones", () => {
  assert.deepEqual(
    scoreText(LEX, "i will ki" + "l".repeat(2000) + "x"),
    scoreText(LEX, "i will killx"),
  );
  assert.deepEqual(flagged("i will killx"), ["violence"]);
  assert.deepEqual(scoreText(LEX, "a" + "!".repeat(100_000) + "x"), scoreText(LEX, "a!x"));
});

Deno.test("scoreText: the matcher's work grows linearly with the text, whatever the text", () => {
  const inputs: Record<string, (n: number) => string> = {
    "letter run in a threat": (n) => "i will ki" + "l".repeat(n) + "x",
    "punctuation run": (n) => "a" + "!".repeat(n) + "x",
    "one letter": (n) => "k".repeat(n),
    "spelled out": (n) => "k i l l ".repeat(n / 8),
    "dotted": (n) => "k.".repeat(n / 2),
    "many matches": (n) => "kill ".repeat(n / 5),
    "glued matches": (n) => "iwillkillyou".repeat(n / 12),
    "near matches": (n) => "i will ".repeat(n / 7),
    "prefixes of phrases": (n) => "you are such a how to make a i want to ".repeat(n / 39),
    "fillers for ~": (n) => "sex a b c ".repeat(n / 10),
    "group then nothing": (n) => "immigrants are ".repeat(n / 15),
  };
  for (const [name, make] of Object.entries(inputs)) {
    const steps = (n: number) => {
      const counter = { steps: 0 };
      scoreText(LEX, make(n), counter);
      return counter.steps;
    };
    const small = steps(2_000);
    const large = steps(20_000);
    assert.ok(small >= 1_000 && large <= 12 * small, `${name}: ${small} → ${large} steps`);
  }
});

const call = {
  signal: new AbortController().signal,
  requestId: "r",
  upstreamModel: "m",
  model: {} as ModelRecord,
  dropped: new Set<string>(),
};

Deno.test("classify: one result per text; paired images' embedded text counts", async () => {
  const threat = await pngUrl("I will kill you");
  const results = await classify(
    LEX,
    { model: "m", input: ["hello", "hi there"], input_images: [await pngUrl(null), threat] },
    call,
  );
  assert.equal(results.length, 2);
  assert.equal(results[0]!.flagged, false);
  assert.equal(results[1]!.flagged, true);
  assert.equal(results[1]!.categories["harassment/threatening"], true);
});

Deno.test("classify is deterministic", async () => {
  const req = { model: "m", input: ["you idiot", "go away", "kill"], input_images: [] };
  assert.deepEqual(await classify(LEX, req, call), await classify(LEX, req, call));
});
