import assert from "node:assert/strict";
import { Logger, maskSecrets } from "../lib/log.ts";

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
