import assert from "node:assert/strict";
import { escapeHelp, escapeLabelValue, formatValue, Registry } from "../../lib/metrics/registry.ts";

Deno.test("escapeLabelValue() escapes backslash, double quote and line feed, and nothing else", () => {
  assert.equal(escapeLabelValue('a\\b"c\nd\te'), 'a\\\\b\\"c\\nd\te');
  assert.equal(escapeHelp('a\\b"c\nd'), 'a\\\\b"c\\nd');
});

Deno.test("formatValue() spells infinities and NaN as the exposition format does", () => {
  assert.deepEqual([Infinity, -Infinity, NaN, 0.25, 3].map(formatValue), [
    "+Inf",
    "-Inf",
    "NaN",
    "0.25",
    "3",
  ]);
});

Deno.test("Registry.render() writes HELP and TYPE once per family and a line per series, labels escaped", async () => {
  const r = new Registry();
  const c = r.counter("demo_calls_total", "Calls\nby tool", ["tool", "status"]);
  c.inc(1, "a", "ok");
  c.inc(2, "a", "ok");
  c.inc(1, 'we"ird\\', "error");
  c.labels("b", "ok").inc();
  r.gauge("demo_open", "Open things").labels().set(4);
  assert.equal(
    await r.render(),
    [
      "# HELP demo_calls_total Calls\\nby tool",
      "# TYPE demo_calls_total counter",
      'demo_calls_total{tool="a",status="ok"} 3',
      'demo_calls_total{tool="we\\"ird\\\\",status="error"} 1',
      'demo_calls_total{tool="b",status="ok"} 1',
      "# HELP demo_open Open things",
      "# TYPE demo_open gauge",
      "demo_open 4",
      "",
    ].join("\n"),
  );
});

Deno.test("Histogram renders cumulative buckets ending in +Inf, then _sum and _count", async () => {
  const r = new Registry();
  const h = r.histogram("demo_duration_seconds", "Durations", ["tool"], [0.1, 1]);
  for (const v of [0.05, 0.1, 0.5, 3]) h.observe(v, "t");
  assert.equal(
    await r.render(),
    [
      "# HELP demo_duration_seconds Durations",
      "# TYPE demo_duration_seconds histogram",
      'demo_duration_seconds_bucket{tool="t",le="0.1"} 2',
      'demo_duration_seconds_bucket{tool="t",le="1"} 3',
      'demo_duration_seconds_bucket{tool="t",le="+Inf"} 4',
      'demo_duration_seconds_sum{tool="t"} 3.65',
      'demo_duration_seconds_count{tool="t"} 4',
      "",
    ].join("\n"),
  );
});

Deno.test("Registry refuses a counter without _total, a reserved label, a duplicate and unordered buckets", () => {
  const r = new Registry();
  assert.throws(() => r.counter("demo_calls", "x"), /_total/);
  assert.throws(() => r.histogram("demo_h", "x", ["le"], [1]), /Invalid label name "le"/);
  assert.throws(() => r.gauge("demo-bad", "x"), /Invalid metric name/);
  r.gauge("demo_g", "x");
  assert.throws(() => r.gauge("demo_g", "x"), /registered twice/);
  assert.throws(() => r.histogram("demo_h2", "x", [], [1, 1]), /must increase/);
});

Deno.test("Registry.collected() reads at scrape time and leaves out a source that fails", async () => {
  const r = new Registry();
  let n = 1;
  r.collected("demo_live", "Live", "gauge", () => [{ labels: { kind: "a" }, value: n }]);
  r.collected("demo_broken", "Broken", "gauge", () => {
    throw new Error("out of reach");
  });
  n = 7;
  const text = await r.render();
  assert.match(text, /^demo_live\{kind="a"\} 7$/m);
  assert.match(text, /# TYPE demo_broken gauge\n$/);
});
