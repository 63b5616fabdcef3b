// Runs the official MCP conformance suite (server mode) against this server over HTTP:
// the full suite against stateful mode, then against stateless mode with the expected failures
// in stateless_expected_failures.yml. Exits non-zero when a scenario fails unexpectedly, when an
// expected failure starts passing, or when the server does not stop cleanly.
//
//   deno run -A tests/conformance/run.ts [--mode stateful|stateless|both] [--suite active|all]
//
// The suite needs Node 22 APIs, so it runs through Deno, outside this project's frozen lock and
// from a scratch folder (so its npm packages never land in this project's node_modules).
import { parseArgs } from "node:util";
import { startHttpServer } from "../fakes/http_server.ts";

/** The suite version the fixtures in lib/providers/conformance were written against. */
export const CONFORMANCE_PACKAGE = "npm:@modelcontextprotocol/conformance@0.1.16";

const HERE = new URL(".", import.meta.url).pathname;

interface Mode {
  name: "stateful" | "stateless";
  serverArgs: string[];
  expectedFailures?: string;
}

const MODES: readonly Mode[] = [
  { name: "stateful", serverArgs: [] },
  {
    name: "stateless",
    serverArgs: ["--stateless"],
    expectedFailures: `${HERE}stateless_expected_failures.yml`,
  },
];

/** What one run of the suite reported. */
export interface RunResult {
  mode: string;
  exitCode: number;
  serverExitCode: number;
  passedChecks: number;
  failedChecks: number;
  /** Per scenario: no failed check (a scenario with only warnings counts as ok here). */
  scenarios: { name: string; ok: boolean }[];
  /** Scenarios the baseline file listed that failed or warned, as the suite reported them. */
  expectedFailures: string[];
}

/** Reads the suite's summary lines (`✓ name: 1 passed, 0 failed`, `Total: ...`). */
export function parseSummary(
  output: string,
): Pick<RunResult, "passedChecks" | "failedChecks" | "scenarios" | "expectedFailures"> {
  // deno-lint-ignore no-control-regex
  const summary = output.slice(output.lastIndexOf("=== SUMMARY ===")).replace(/\x1b\[[0-9;]*m/g, "");
  const baseline = /^Expected failures \(in baseline\):\n((?: {2}~ .+\n?)*)/m.exec(summary);
  const expectedFailures = baseline?.[1]?.split("\n").filter(Boolean).map((l) => l.replace(/^ {2}~ /, "")) ??
    [];
  const scenarios = [...summary.matchAll(/^([✓✗]) ([\w\-/]+): \d+ passed, \d+ failed/gmu)].map((m) => ({
    name: m[2]!,
    ok: m[1] === "✓",
  }));
  const total = /^Total: (\d+) passed, (\d+) failed/m.exec(summary);
  return {
    passedChecks: Number(total?.[1] ?? 0),
    failedChecks: Number(total?.[2] ?? 0),
    scenarios,
    expectedFailures,
  };
}

async function runMode(mode: Mode, suite: string): Promise<RunResult> {
  const server = await startHttpServer({ args: ["--providers", "conformance", ...mode.serverArgs] });
  const scratch = await Deno.makeTempDir({ prefix: "opendata-mcp-conformance-" });
  let output = "";
  let exitCode: number;
  try {
    const args = [
      "run",
      "--no-lock",
      "-A",
      CONFORMANCE_PACKAGE,
      "server",
      "--url",
      `${server.origin}/mcp`,
      "--suite",
      suite,
      ...(mode.expectedFailures ? ["--expected-failures", mode.expectedFailures] : []),
    ];
    console.log(`\n### conformance (${mode.name}): deno ${args.join(" ")}`);
    const child = new Deno.Command(Deno.execPath(), {
      args,
      cwd: scratch,
      stdin: "null",
      stdout: "piped",
      stderr: "inherit",
      env: { NO_COLOR: "1" },
    }).spawn();
    const decoder = new TextDecoder();
    for await (const chunk of child.stdout) {
      const text = decoder.decode(chunk, { stream: true });
      output += text;
      await Deno.stdout.write(chunk);
    }
    exitCode = (await child.status).code;
  } finally {
    await Deno.remove(scratch, { recursive: true }).catch(() => {});
  }
  const serverExitCode = await server.stop("SIGTERM");
  if (serverExitCode !== 0) {
    console.error(`The ${mode.name} server exited with ${serverExitCode}:\n${server.stderr()}`);
  }
  return { mode: mode.name, exitCode, serverExitCode, ...parseSummary(output) };
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: { mode: { type: "string", default: "both" }, suite: { type: "string", default: "active" } },
  });
  const modes = MODES.filter((m) => values.mode === "both" || m.name === values.mode);
  if (modes.length === 0) {
    console.error(`Unknown --mode "${values.mode}": use stateful, stateless or both`);
    Deno.exit(2);
  }
  const results: RunResult[] = [];
  for (const mode of modes) results.push(await runMode(mode, values.suite!));
  console.log("\n### conformance summary");
  for (const r of results) {
    const failed = r.scenarios.filter((s) => !s.ok).map((s) => s.name);
    // A scenario listed as an expected failure that shows no failed check only warned.
    const clean = r.scenarios.filter((s) => s.ok && !r.expectedFailures.includes(s.name));
    console.log(
      `${r.mode}: ${clean.length}/${r.scenarios.length} scenarios passed cleanly, ` +
        `${r.passedChecks} checks passed, ${r.failedChecks} failed` +
        (failed.length ? ` (failing: ${failed.join(", ")})` : "") +
        (r.expectedFailures.length ? `; expected failures: ${r.expectedFailures.join(", ")}` : "") +
        `; suite exit ${r.exitCode}, server exit ${r.serverExitCode}`,
    );
  }
  Deno.exit(results.every((r) => r.exitCode === 0 && r.serverExitCode === 0) ? 0 : 1);
}
