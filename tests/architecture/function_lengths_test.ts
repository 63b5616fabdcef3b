// Functions in lib/ stay short enough to read: a function past LIMIT lines is split into named
// steps (as runToolCall in lib/mcp/tool_call.ts, createServer in lib/mcp/server.ts and createApp
// in lib/app.ts were). The few longer ones are listed with their length today; a listed function
// may shrink but not grow, and the list only shrinks: an entry is dropped once its function fits.
import assert from "node:assert/strict";
import { functionLengths } from "./function_lengths.ts";

/** Most lines a function in lib/ may span, its signature and closing brace included. */
const LIMIT = 150;

/** The functions past LIMIT today, by `path name`, with the most lines each may keep. */
const LONGER: ReadonlyMap<string, number> = new Map([
  // The server block's schema: one field after another, each with its default and description.
  ["lib/config/server_schema.ts buildServerSchema", 215],
]);

const ROOT = new URL("../../", import.meta.url);

/** Every function of lib/'s TypeScript modules, keyed `path name`, with its longest length. */
async function libFunctions(dir = "lib/"): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for await (const entry of Deno.readDir(new URL(dir, ROOT))) {
    const path = `${dir}${entry.name}`;
    if (entry.isDirectory) {
      for (const [key, lines] of await libFunctions(`${path}/`)) out.set(key, lines);
    } else if (entry.name.endsWith(".ts")) {
      const source = await Deno.readTextFile(new URL(path, ROOT));
      for (const f of functionLengths(path, source)) {
        const key = `${path} ${f.name}`;
        out.set(key, Math.max(out.get(key) ?? 0, f.lines));
      }
    }
  }
  return out;
}

const LIB = await libFunctions();

Deno.test("functionLengths() measures declarations, arrows and methods by their first and last line", () => {
  const source = [
    "export function outer(a: string): string {", // 1
    "  const inner = (b: string): string => {", // 2
    "    return `${b}}}`; // a brace in a string and a comment: }", // 3
    "  };", // 4
    "  return inner(a);", // 5
    "}", // 6
    "class Box {", // 7
    "  #open(): void {}", // 8
    "  shut(): void {", // 9
    "  }", // 10
    "}", // 11
    "[1].map(function () {", // 12
    "});", // 13
  ].join("\n");
  const found = functionLengths("x.ts", source).map((f) => `${f.name}@${f.line}:${f.lines}`);
  assert.deepEqual(found, ["outer@1:6", "inner@2:3", "Box.shut@9:2", "<anonymous>@12:2", "Box.#open@8:1"]);
});

Deno.test(`lib/: no function is longer than ${LIMIT} lines, except those listed, which do not grow`, () => {
  const over = [...LIB]
    .filter(([key, lines]) => lines > (LONGER.get(key) ?? LIMIT))
    .map(([key, lines]) => `  ${key}: ${lines} lines (at most ${LONGER.get(key) ?? LIMIT})`);
  assert.equal(
    over.length,
    0,
    `split these into named steps (small functions the top one calls in sequence):\n${over.join("\n")}`,
  );
});

Deno.test(`lib/: every function listed as longer than ${LIMIT} lines still is (the list only shrinks)`, () => {
  const stale = [...LONGER.keys()].filter((key) => (LIB.get(key) ?? 0) <= LIMIT);
  assert.deepEqual(stale, [], "drop these entries: their functions fit the limit now, or are gone");
});

Deno.test("lib/: runToolCall, createServer and createApp fit the limit, not listed as exceptions", () => {
  for (
    const key of [
      "lib/mcp/tool_call.ts runToolCall",
      "lib/mcp/server.ts createServer",
      "lib/app.ts createApp",
    ]
  ) {
    const lines = LIB.get(key);
    assert.ok(lines !== undefined, `${key} not found`);
    assert.ok(lines <= LIMIT, `${key}: ${lines} lines`);
    assert.ok(!LONGER.has(key), `${key} is listed`);
  }
});
