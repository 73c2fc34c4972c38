import assert from "node:assert/strict";
import parsePrometheus from "npm:parse-prometheus-text-format@1.1.1";
import { Counter, Gauge, Histogram, renderAll } from "../../src/metrics/instruments.ts";

Deno.test("Counter: one sample per label set, values escaped as the text format wants", () => {
  const counter = new Counter("t_total", "Things.\nCounted.", ["route", "model"]);
  counter.inc(["/a", 'say "hi"\\now']);
  counter.inc(["/a", 'say "hi"\\now'], 4);
  counter.inc(["/b", "line\nbreak"]);
  const text = counter.render();
  assert.equal(
    text,
    "# HELP t_total Things.\\nCounted.\n# TYPE t_total counter\n" +
      't_total{route="/a",model="say \\"hi\\"\\\\now"} 5\n' +
      't_total{route="/b",model="line\\nbreak"} 1\n',
  );
  const [family] = parsePrometheus(text);
  assert.deepEqual(family.metrics, [
    { value: "5", labels: { route: "/a", model: 'say "hi"\\now' } },
    { value: "1", labels: { route: "/b", model: "line\nbreak" } },
  ]);
});

Deno.test("Histogram: cumulative buckets up to +Inf, with _sum and _count", () => {
  const histogram = new Histogram("d_seconds", "Durations.", ["route"], [0.1, 1]);
  for (const value of [0.05, 0.1, 0.5, 3]) histogram.observe(["/a"], value);
  histogram.observe(["/b"], 2);
  assert.equal(
    histogram.render(),
    "# HELP d_seconds Durations.\n# TYPE d_seconds histogram\n" +
      'd_seconds_bucket{route="/a",le="0.1"} 2\n' +
      'd_seconds_bucket{route="/a",le="1"} 3\n' +
      'd_seconds_bucket{route="/a",le="+Inf"} 4\n' +
      'd_seconds_sum{route="/a"} 3.65\n' +
      'd_seconds_count{route="/a"} 4\n' +
      'd_seconds_bucket{route="/b",le="0.1"} 0\n' +
      'd_seconds_bucket{route="/b",le="1"} 0\n' +
      'd_seconds_bucket{route="/b",le="+Inf"} 1\n' +
      'd_seconds_sum{route="/b"} 2\n' +
      'd_seconds_count{route="/b"} 1\n',
  );
});

Deno.test("Gauge and renderAll: read at render time; a parser reads the whole exposition", () => {
  let value = 1;
  const gauge = new Gauge("g_bytes", "Bytes.", [], () => [[[], value]]);
  const unlabelled = new Histogram("h_seconds", "H.", [], [1]);
  unlabelled.observe([], 0.5);
  value = 42;
  const families = parsePrometheus(renderAll([gauge, unlabelled]));
  assert.deepEqual(families, [
    { name: "g_bytes", help: "Bytes.", type: "GAUGE", metrics: [{ value: "42" }] },
    {
      name: "h_seconds",
      help: "H.",
      type: "HISTOGRAM",
      metrics: [{ buckets: { "1": "1", "+Inf": "1" }, sum: "0.5", count: "1" }],
    },
  ]);
});
