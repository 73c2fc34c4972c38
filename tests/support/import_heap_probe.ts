/**
 * Prints, as JSON, how much live heap importing the app's modules adds (after full collections
 * before and after): run with `--v8-flags=--expose-gc` by `tests/perf/import_heap_test.ts`.
 */
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --v8-flags=--expose-gc");
gc();
gc();
const before = Deno.memoryUsage().heapUsed;
await import("../../src/app.ts");
gc();
gc();
const after = Deno.memoryUsage().heapUsed;
console.log(JSON.stringify({ addedBytes: after - before }));
