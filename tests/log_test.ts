import assert from "node:assert/strict";
import { batchLines, Logger, maskSecrets } from "../lib/log.ts";

Deno.test("Logger writes one JSON object per line with inherited fields and masks secrets", () => {
  const lines: string[] = [];
  const logger = new Logger({
    level: "info",
    write: (l) => lines.push(l),
    secrets: ["hunter2-secret"],
    now: () => 0,
  });
  const child = logger.child({ request_id: "r1" }).child({ tool_name: "t" });
  child.debug("dropped");
  child.info("called", { url: "https://x/?api_key=hunter2-secret" });
  child.addSecret("late-secret-value");
  child.warn("oops", { error: new Error("late-secret-value leaked") });
  assert.equal(lines.length, 2);
  const first = JSON.parse(lines[0]!);
  assert.deepEqual(first, {
    time: "1970-01-01T00:00:00.000Z",
    level: "info",
    msg: "called",
    request_id: "r1",
    tool_name: "t",
    url: "https://x/?api_key=***",
  });
  assert.deepEqual(JSON.parse(lines[1]!).error, { name: "Error", message: "*** leaked" });
});

Deno.test("Logger.setLevel() applies to every logger sharing the output", () => {
  const lines: string[] = [];
  const root = new Logger({ level: "error", write: (l) => lines.push(l) });
  const child = root.child({ a: 1 });
  child.info("hidden");
  root.setLevel("debug");
  child.debug("shown");
  assert.equal(lines.length, 1);
  assert.equal(child.enabled("debug"), true);
});

Deno.test("maskSecrets() replaces every occurrence", () => {
  assert.equal(maskSecrets("a-KEY-b-KEY", ["KEY"]), "a-***-b-***");
});

Deno.test("Logger.child() with skip leaves out those messages, in it and its children only", () => {
  const lines: string[] = [];
  const root = new Logger({ write: (l) => lines.push(JSON.parse(l).msg) });
  const quiet = root.child({ provider: "fred" }, new Set(["said at start"]));
  quiet.warn("said at start");
  quiet.child({ tool_name: "x" }).warn("said at start");
  quiet.warn("new");
  root.warn("said at start");
  assert.deepEqual(lines, ["new", "said at start"]);
});

Deno.test("Logger logs an Error as its name and message within four levels of its fields, and never its stack", () => {
  const lines: string[] = [];
  const logger = new Logger({ write: (l) => lines.push(l), now: () => 0 });
  const error = new TypeError("bad input");
  logger.child({ cause: error }).info("inherited");
  logger.error("nested", { upstream: { error }, errors: [error] });
  logger.info("plain", { count: 2, nested: { ok: true } });
  logger.warn("deep", { a: { b: { c: { error } } } });
  const [inherited, nested, plain, deep] = lines.map((l) => JSON.parse(l));
  const logged = { name: "TypeError", message: "bad input" };
  assert.deepEqual(inherited.cause, logged);
  assert.deepEqual(nested.upstream, { error: logged });
  assert.deepEqual(nested.errors, [logged]);
  assert.deepEqual(plain.nested, { ok: true });
  assert.deepEqual(deep.a.b.c.error, logged);
  assert.ok(!lines.join("\n").includes("at "), "no stack frame in any line");
});

Deno.test("batchLines() writes the lines of one turn together, in order, and flush() writes at once", async () => {
  const writes: string[] = [];
  const scheduled: (() => void)[] = [];
  const batch = batchLines((text) => writes.push(text), (flush) => scheduled.push(flush));
  batch.write("a");
  batch.write("b");
  assert.deepEqual(writes, [], "nothing is written before the turn ends");
  assert.equal(scheduled.length, 1, "one flush per batch");
  scheduled[0]!();
  assert.deepEqual(writes, ["a\nb"]);
  scheduled[0]!();
  assert.deepEqual(writes, ["a\nb"], "an empty batch writes nothing");
  batch.write("c");
  batch.flush();
  assert.deepEqual(writes, ["a\nb", "c"]);
  const failing = batchLines(() => {
    throw new Deno.errors.BrokenPipe("stderr closed");
  }, (flush) => scheduled.push(flush));
  failing.write("lost");
  assert.doesNotThrow(() => scheduled.at(-1)!(), "a sink that fails does not throw into the event loop");

  // With the default schedule, lines logged in one synchronous run reach the sink before any
  // later task runs (so a log line never trails the response it describes).
  const real: string[] = [];
  const live = batchLines((text) => real.push(text));
  live.write("x");
  live.write("y");
  await Promise.resolve();
  assert.deepEqual(real, ["x\ny"]);
});
