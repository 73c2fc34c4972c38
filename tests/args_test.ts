import assert from "node:assert/strict";
import {
  allowOnly,
  type ArgSpec,
  integerIn,
  invalidValue,
  parseArgs,
  parseCommand,
  UsageError,
} from "../src/args.ts";

const SPEC: ArgSpec = {
  values: ["config", "models", "port"],
  switches: ["json", "force"],
  mayBeEmpty: ["models"],
  positional: true,
};

Deno.test("parseArgs: values spaced or with =, switches, and the words between, in order", () => {
  const args = parseArgs(
    ["show", "--config", "a.json", "key_1", "--json", "--models=a,b=c", "--port", "-1"],
    SPEC,
  );
  assert.deepEqual(args.positional, ["show", "key_1"]);
  assert.deepEqual(
    args.values,
    new Map([["config", "a.json"], ["models", "a,b=c"], ["port", "-1"]]),
  );
  assert.deepEqual(args.switches, new Set(["json"]));
  assert.deepEqual(parseArgs([], SPEC), {
    positional: [],
    values: new Map(),
    switches: new Set(),
  });
});

Deno.test("parseArgs: an empty value only where the spec allows one", () => {
  assert.equal(parseArgs(["--models="], SPEC).values.get("models"), "");
  assert.equal(parseArgs(["--models", ""], SPEC).values.get("models"), "");
  assert.throws(() => parseArgs(["--config="], SPEC), {
    name: "UsageError",
    message: "--config needs a value",
  });
});

Deno.test("parseArgs: each refusal is a UsageError naming the flag or the word", () => {
  const cases: [string[], ArgSpec, string][] = [
    [["--conf", "x"], SPEC, "unknown option --conf (did you mean --config?)"],
    [["--colour", "red"], SPEC, "unknown option --colour"],
    [["--"], SPEC, "unknown option --"],
    [["--json", "--json"], SPEC, "--json is given more than once"],
    [["--port", "1", "--port=2"], SPEC, "--port is given more than once"],
    [["--json=yes"], SPEC, "--json takes no value"],
    [["--port"], SPEC, "--port needs a value"],
    [["--config", "--json"], SPEC, "--config needs a value"],
    [["--config", ""], SPEC, "--config needs a value"],
    [["serve"], { values: ["port"] }, 'unexpected argument "serve"'],
  ];
  for (const [args, spec, message] of cases) {
    assert.throws(() => parseArgs(args, spec), { name: "UsageError", message }, args.join(" "));
  }
  assert.ok(new UsageError("x") instanceof Error);
});

Deno.test("parseCommand: global flags anywhere, the command's own after it is known", () => {
  const commands = { list: { switches: ["json"] }, prune: { switches: ["dry-run"] }, help: {} };
  const global: ArgSpec = { values: ["config"], switches: ["help"] };
  const args = parseCommand(["--config", "list", "prune", "--dry-run"], global, commands);
  assert.deepEqual(args.positional, ["prune"]);
  assert.equal(args.values.get("config"), "list");
  assert.deepEqual(args.switches, new Set(["dry-run"]));
  assert.deepEqual(parseCommand(["--help"], global, commands).switches, new Set(["help"]));
  const cases: [string[], string][] = [
    [["prune", "--force"], "prune does not take --force"],
    [["--json", "prune"], "prune does not take --json"],
    [["list", "--json=1"], "--json takes no value"],
    [["frob", "--json"], "unknown command frob"],
    [["--json"], "unknown option --json"],
    [["list", "--config"], "--config needs a value"],
  ];
  for (const [line, message] of cases) {
    assert.throws(() => parseCommand(line, global, commands), { message }, line.join(" "));
  }
});

Deno.test("allowOnly: refuses a flag the command does not take, naming both", () => {
  const args = parseArgs(["create", "--json", "--config", "c.json"], SPEC);
  allowOnly(args, "list", ["json", "config"]);
  assert.throws(() => allowOnly(args, "create", ["config", "models"]), {
    message: "create does not take --json",
  });
});

Deno.test("integerIn: digits within the range, else null", () => {
  assert.equal(integerIn("0", 0, 65535), 0);
  assert.equal(integerIn("65535", 0, 65535), 65535);
  assert.equal(integerIn("8014", 1, 99_999), 8014);
  for (const value of ["65536", "-1", "1.5", "1e3", " 1", "", "0x10", "12345678901234567"]) {
    assert.equal(integerIn(value, 0, 65535), null, value);
  }
  assert.equal(integerIn("0", 1, 10), null);
});

Deno.test("invalidValue names the flag, what it takes and what it got (quoted, cut short)", () => {
  assert.equal(
    invalidValue("chat-per-minute", 'a positive integer or "unlimited"', "0").message,
    '--chat-per-minute: expected a positive integer or "unlimited", not "0"',
  );
  assert.equal(invalidValue("x", "y", "z".repeat(500)).message.length < 150, true);
});
