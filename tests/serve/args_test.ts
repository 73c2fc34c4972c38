import assert from "node:assert/strict";
import { parseServeArgs } from "../../src/serve/args.ts";

Deno.test("parseServeArgs: --config, --port and --hostname, spaced or with =", () => {
  assert.deepEqual(parseServeArgs([]), { help: false, version: false });
  assert.deepEqual(
    parseServeArgs(["--config", "a.json", "--port=8014", "--hostname", "127.0.0.1"]),
    { help: false, version: false, config: "a.json", port: 8014, hostname: "127.0.0.1" },
  );
  assert.deepEqual(parseServeArgs(["--port", "0", "--version"]), {
    help: false,
    version: true,
    port: 0,
  });
});

Deno.test("parseServeArgs: unknown options are named (with the closest), bad values refused", () => {
  const cases: [string[], string][] = [
    [["--conf", "x.json"], "unknown option --conf (did you mean --config?)"],
    [["--prot", "1"], "unknown option --prot (did you mean --port?)"],
    [["--verbose"], "unknown option --verbose"],
    [["--port", "abc"], '--port must be a port number 0–65535, not "abc"'],
    [["--port", "65536"], '--port must be a port number 0–65535, not "65536"'],
    [["--port=-1"], '--port must be a port number 0–65535, not "-1"'],
    [["--port"], "--port needs a value"],
    [["--config", "--port", "1"], "--config needs a value"],
    [["--help=yes"], "--help takes no value"],
    [["serve"], 'unexpected argument "serve"'],
  ];
  for (const [args, message] of cases) {
    assert.throws(() => parseServeArgs(args), { name: "UsageError", message }, args.join(" "));
  }
});
