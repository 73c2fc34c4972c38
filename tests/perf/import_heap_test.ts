/**
 * What importing the app keeps alive (README, Performance: V8 lets the old generation grow to
 * about four times the live heap, so each MB kept live is about 4 MB of peak RSS). Importing the
 * simulator's moderation module used to compile its lexicon into a 7.5 MB automaton in every
 * process; the provider now compiles it on its first moderation call. The app's modules (with
 * `node:crypto` and the compatibility layer it loads, ~2.2 MB) add ~4.9 MB (5.4 MB before their
 * sources kept to Latin-1: see `tests/source_charset_test.ts`).
 */
import assert from "node:assert/strict";
import { runGcProbe } from "../support/process.ts";

Deno.test("importing the app keeps less than 8 MB of heap alive (no tables built at import)", async () => {
  const { addedBytes } = await runGcProbe<{ addedBytes: number }>("import_heap_probe.ts");
  assert.ok(addedBytes < 8 * 1024 * 1024, `importing src/app.ts added ${addedBytes} bytes`);
});
