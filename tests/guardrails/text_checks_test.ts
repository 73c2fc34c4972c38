import assert from "node:assert/strict";
import type { GuardrailConfig } from "../../src/config/types.ts";
import { denyFinder } from "../../src/guardrails/deny.ts";
import { GuardrailReport } from "../../src/guardrails/report.ts";
import { maxMatchChars, unsafePattern } from "../../src/guardrails/safe_pattern.ts";
import { checkText, textCheck, WindowFilter } from "../../src/guardrails/text_checks.ts";
import { Vault } from "../../src/guardrails/vault.ts";
import { ApiError } from "../../src/errors.ts";

const pii = (action: GuardrailConfig["action"], restore = false): GuardrailConfig => ({
  type: "pii",
  name: "pii",
  stage: "input",
  action,
  on_error: "block",
  ...(restore ? { restore } : {}),
});

function state() {
  return { report: new GuardrailReport(), vault: new Vault() };
}

Deno.test("deny: words whole and ignoring case, phrases across spaces, patterns", () => {
  const find = denyFinder(["secret project", "Zeus"], ["ticket-[0-9]{3,6}"]);
  const text = "The SECRET  project zeus, not zeusian; TICKET-1234 and ticket-12.";
  assert.deepEqual(find(text).map((f) => text.slice(f.start, f.end)), [
    "SECRET  project",
    "zeus",
    "TICKET-1234",
  ]);
  assert.deepEqual(denyFinder(["a.b"], [])("axb a.b"), [{ start: 4, end: 7, kind: "denied" }]);
});

Deno.test("deny patterns: only patterns whose work per character is bounded are accepted", () => {
  for (
    const ok of ["ticket-[0-9]{3,6}", "(?:foo|bar) baz", "\\bpass(?:word)?\\b", "[a-z+*]{1,20}x"]
  ) {
    assert.equal(unsafePattern(ok), null, ok);
  }
  const refused: [string, RegExp][] = [
    ["(a+)+b", /unbounded/],
    ["(a{1,5}){1,5}", /nested/],
    ["(a|ab){1,9}", /nested/],
    ["(x)\\1", /backreferences/],
    ["(?=a)b", /lookarounds/],
    [".{0,100}x.{0,100}", /multiply/],
    ["a".repeat(201), /at most 200/],
    ["(", /not a valid/],
  ];
  for (const [pattern, why] of refused) assert.match(unsafePattern(pattern) ?? "", why, pattern);
});

Deno.test("pii redact: typed placeholders, the same value the same one, restored on request", () => {
  const s = state();
  const check = textCheck(pii("redact", true))!;
  const text = checkText(
    "a@example.com, b@example.com, a@example.com 4111111111111111",
    [check],
    s,
  );
  assert.equal(text, "[EMAIL_1], [EMAIL_2], [EMAIL_1] [CARD_1]");
  assert.deepEqual(s.report.verdicts, [
    { name: "pii", stage: "input", verdict: "redacted", found: { email: 3, card: 1 } },
  ]);
  assert.equal(s.vault.restore("to [EMAIL_2] and [EMAIL_9]"), "to b@example.com and [EMAIL_9]");
});

Deno.test("pii block throws guardrail_blocked naming the guardrail, never the value; log passes", () => {
  const s = state();
  assert.throws(
    () => checkText("key sk-proj-Ab3dEf6hIj9kLmN0pQrStUvWxYz12345", [textCheck(pii("block"))!], s),
    (e) =>
      e instanceof ApiError && e.status === 400 && e.code === "guardrail_blocked" &&
      e.message.includes('"pii"') && e.message.includes("secret") && !e.message.includes("sk-proj"),
  );
  const t = state();
  assert.equal(checkText("ip 10.0.0.1", [textCheck(pii("log"))!], t), "ip 10.0.0.1");
  assert.deepEqual(t.report.verdicts[0]?.verdict, "logged");
});

Deno.test("window filter: a finding split across deltas is caught; everything else comes out once, in order", () => {
  const s = state();
  const filter = new WindowFilter([textCheck(pii("redact"))!], s, 24);
  const text = "Hello there, my card is 4111 1111 1111 1111 and mail me at jane.doe@example.com. " +
    "Bye now, see you soon.";
  let out = "";
  for (let i = 0; i < text.length; i += 3) out += filter.push(text.slice(i, i + 3));
  out += filter.end();
  assert.equal(
    out,
    "Hello there, my card is [CARD_1] and mail me at [EMAIL_1]. Bye now, see you soon.",
  );
});

const deny = (words: string[], patterns: string[] = []): GuardrailConfig => ({
  type: "deny",
  name: "deny",
  stage: "output",
  action: "redact",
  on_error: "block",
  words,
  patterns,
});

Deno.test("window filter: a window's start is read after the text already sent (no word found inside a longer one)", () => {
  const streamed = (guardrail: GuardrailConfig, pieces: string[], hold: number) => {
    const filter = new WindowFilter([textCheck(guardrail)!], state(), hold);
    return pieces.map((p) => filter.push(p)).join("") + filter.end();
  };
  // The first window sends "...top" and holds "secret" back: the next one starts with it.
  assert.equal(
    streamed(deny(["secret"]), ["0123456789topsecret", " is out, secret!"], 6),
    "0123456789topsecret is out, [DENIED_1]!",
  );
  // A pattern's word boundary, and its end held back for the last window.
  assert.equal(
    streamed(deny([], ["\\bcode\\b"]), ["0123456789zipcode", " and code"], 4),
    "0123456789zipcode and [DENIED_1]",
  );
  // A card number inside a longer run of digits is none, also where the last window starts.
  assert.equal(
    streamed(pii("redact"), ["abcdefghijklmnop 99994111111111111111", " end"], 16),
    "abcdefghijklmnop 99994111111111111111 end",
  );
  assert.equal(
    streamed(pii("redact"), ["abcdefghijklmnop 4111111111111111", " end"], 16),
    "abcdefghijklmnop [CARD_1] end",
  );
});

Deno.test("stream restorer: a placeholder split across deltas is put back whole", () => {
  const vault = new Vault();
  vault.placeholder("EMAIL", "jane@example.com", true);
  const restorer = vault.streamRestorer();
  const pieces = ["Write to [EM", "AIL", "_1", "] now [", "not a placeholder"];
  const out = pieces.map((p) => restorer.push(p)).join("") + restorer.end();
  assert.equal(out, "Write to jane@example.com now [not a placeholder");
});

Deno.test("Vault.conceal puts each value's placeholder wherever it is in a string, longest first, and leaves the keys alone", () => {
  const vault = new Vault();
  vault.placeholder("EMAIL", "jo@example.com", true);
  vault.placeholder("EMAIL", "anne.jo@example.com", false);
  vault.placeholder("SECRET", 'sk-a"b\\c', false);
  // A denied word that is also a key of the logged content: the record keeps its shape.
  vault.placeholder("DENY", "content", false);
  const logged = {
    messages: [{
      role: "user",
      content: 'mail anne.jo@example.com or jo@example.com, key sk-a"b\\c; no content',
    }],
    output: ["Sure, jo@example.com.", 7, null, { text: "content" }],
  };
  assert.deepEqual(vault.conceal(logged), {
    messages: [{
      role: "user",
      content: "mail [EMAIL_2] or [EMAIL_1], key [SECRET_1]; no [DENY_1]",
    }],
    output: ["Sure, [EMAIL_1].", 7, null, { text: "[DENY_1]" }],
  });
  assert.equal(new Vault().used, false);
  assert.equal(vault.used, true);
});

Deno.test("maxMatchChars: the most a safe pattern's match can span (each character two code units), as a generated match confirms", () => {
  const cases: [string, number][] = [
    ["abc", 6],
    ["a{3}", 6],
    ["[a-z]{1,40}", 80],
    ["sk-[A-Za-z0-9]{20,48}", 102],
    ["(?:abc){1,4}", 24],
    ["(?<key>x\\d{2})-y", 10],
    ["^\\p{Lu}{1,3}$", 6],
    ["a|bb|ccc", 6],
    ["a(b|cd)e", 8],
    ["secret-[a-z]{1,150}", 314],
  ];
  for (const [pattern, max] of cases) {
    assert.equal(unsafePattern(pattern), null, pattern);
    assert.equal(maxMatchChars(pattern), max, pattern);
  }
  // The bound holds for real matches: the longest text of each repeat, matched whole.
  const longest = "secret-" + "q".repeat(150);
  assert.ok(new RegExp("secret-[a-z]{1,150}", "u").exec(longest)![0].length <= 314);
});
