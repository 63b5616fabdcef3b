// Reads the coverage collected by `deno task test` (tests and the servers they spawn), writes
// coverage/lcov.info and a summary, and fails when lines covered fall under the threshold
// (80 %, the goal the FRED design set for the project).
const THRESHOLD = Number(Deno.args[0] ?? 80);
const ROOT_URL = new URL("../", import.meta.url).href.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

async function coverage(args: string[]): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    // Only this checkout's files: tests also run servers from copies in temporary folders
    // (gone by now), whose sources `deno coverage` would report as not found.
    args: ["coverage", "coverage/raw", `--include=^${ROOT_URL}`, "--exclude=tests/|node_modules/", ...args],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    console.error(new TextDecoder().decode(out.stderr));
    Deno.exit(1);
  }
  return new TextDecoder().decode(out.stdout);
}

const summary = await coverage([]);
await coverage(["--lcov", "--output=coverage/lcov.info"]);
const row = summary.split("\n").find((l) => l.includes("All files"));
const cells = row?.split("|").map((c) => c.trim()).filter(Boolean) ?? [];
const lines = Number(cells[cells.length - 1]);
if (!Number.isFinite(lines)) {
  console.error("coverage: could not read the summary");
  Deno.exit(1);
}
console.log(summary.trimEnd());
console.log(
  `coverage: ${lines.toFixed(1)} % of lines (threshold ${THRESHOLD} %), lcov in coverage/lcov.info`,
);
if (lines < THRESHOLD) {
  console.error(`coverage: ${lines.toFixed(1)} % is under the ${THRESHOLD} % threshold`);
  Deno.exit(1);
}
