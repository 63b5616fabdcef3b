// Runs the official MCP conformance suite (server mode) over HTTP against tests/conformance/server.ts: the
// requirement sets of both protocol revisions (2025-11-25, with sessions; 2026-07-28, stateless by
// design), each against the server in stateful and in stateless (--stateless) mode. A run may
// have an expected-failures file (expected_failures.<revision>.<mode>.yml) for what the spec makes
// impossible in that mode. Exits non-zero when a scored scenario fails unexpectedly, when an
// expected failure starts passing, when a scenario this project requires although the suite does
// not score it fails, when a run overruns its time budget, or when a server does not stop cleanly.
//
//   deno run -A tests/conformance/run.ts [--mode stateful|stateless|both]
//                                        [--requirements 2025-11-25|2026-07-28|both]
//
// The suite needs Node 22 APIs, so it runs through Deno, outside this project's frozen lock and
// from a scratch folder (so its npm packages never land in this project's node_modules).
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { startHttpServer } from "../harness/spawn_http.ts";

/** The suite version the fixtures in tests/conformance/provider were written against. */
export const CONFORMANCE_PACKAGE = "npm:@modelcontextprotocol/conformance@0.2.0-alpha.12";

/** The protocol revisions whose requirement sets are run. */
export const REVISIONS = ["2025-11-25", "2026-07-28"] as const;

/** The server modes each requirement set runs against. */
export const MODES = ["stateful", "stateless"] as const;

/**
 * The Tasks extension's scenarios (docs/MCP.md, "Tasks"): unscored as an extension by the suite,
 * required here. `tasks-status-notifications` is left out: the suite itself skips it (pending
 * its rewrite onto `subscriptions/listen`).
 */
export const TASK_SCENARIOS: readonly string[] = [
  "tasks-lifecycle",
  "tasks-capability-negotiation",
  "tasks-wire-fields",
  "tasks-request-state-removal",
  "tasks-mrtr-input",
  "tasks-request-headers",
  "tasks-dispatch-and-envelope",
  "tasks-required-task-error",
  "tasks-mrtr-composition",
];

/**
 * Scenarios the suite runs without scoring that this project requires all the same (docs/RUNNING.md:
 * JSON Schema 2020-12 keywords survive `tools/list`; the SEP-2243 routing headers, standard and
 * `Mcp-Param-*`, are checked against the body). Pending in the suite only because its own
 * reference server cannot pass them yet. Only those a revision's requirement set runs are
 * required of it (the header scenarios belong to 2026-07-28).
 */
export const REQUIRED_UNSCORED: readonly string[] = [
  "json-schema-2020-12",
  "http-header-validation",
  "http-custom-header-server-validation",
  ...TASK_SCENARIOS,
];

/**
 * Longest one run of a requirement set may take before it is stopped and counted as failed; a run
 * takes a few seconds. Each scenario has its own, shorter limit (`--timeout`), so one hung
 * scenario fails on its own without using up the budget. Listing a requirement set gets longer,
 * since the first one may download the suite's npm packages.
 */
const RUN_BUDGET_MS = 60_000;
const LIST_BUDGET_MS = 180_000;
const SCENARIO_TIMEOUT_MS = 15_000;

const HERE = new URL(".", import.meta.url).pathname;

type Revision = typeof REVISIONS[number];
type Mode = typeof MODES[number];

/** One scenario's verdict as the suite's summary gives it. */
export interface ScenarioResult {
  name: string;
  /** No failed check (warnings allowed). */
  ok: boolean;
  passed: number;
  failed: number;
}

/** What a requirement set scores for the server, and what it runs without scoring (and why). */
export interface Requirements {
  scored: string[];
  /** Scenario name -> reason (`pending`, `extension`, `added-after-release`). */
  unscored: Map<string, string>;
}

/** What one run of the suite reported. */
export interface RunResult {
  revision: Revision;
  mode: Mode;
  exitCode: number;
  seconds: number;
  timedOut: boolean;
  passedChecks: number;
  failedChecks: number;
  scenarios: ScenarioResult[];
  /** Baseline entries that failed as expected, as the suite listed them. */
  expectedFailures: string[];
}

// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

/** Reads the suite's last summary (`✓ name: 1 passed, 0 failed`, `Total: ...`, baseline entries). */
export function parseSummary(
  output: string,
): Pick<RunResult, "passedChecks" | "failedChecks" | "scenarios" | "expectedFailures"> {
  const summary = output.slice(output.lastIndexOf("=== SUMMARY ===")).replace(ANSI, "");
  const baseline = /^Expected failures \(in baseline\):\n((?: {2}~ .+\n?)*)/m.exec(summary);
  const expectedFailures = baseline?.[1]?.split("\n").filter(Boolean).map((l) => l.replace(/^ {2}~ /, "")) ??
    [];
  const scenarios = [...summary.matchAll(/^([✓✗]) ([\w\-/]+): (\d+) passed, (\d+) failed/gmu)].map((m) => ({
    name: m[2]!,
    ok: m[1] === "✓",
    passed: Number(m[3]),
    failed: Number(m[4]),
  }));
  const total = /^Total: (\d+) passed, (\d+) failed/m.exec(summary);
  return {
    passedChecks: Number(total?.[1] ?? 0),
    failedChecks: Number(total?.[2] ?? 0),
    scenarios,
    expectedFailures,
  };
}

/** Reads `conformance list --requirements <revision>`: the server scenarios, scored or not. */
export function parseRequirements(output: string): Requirements {
  const text = output.replace(ANSI, "");
  const server = /^Server scenarios[^\n]*:\n((?: {2}- .+\n?)*)/m.exec(text);
  const scored = server?.[1]?.split("\n").filter(Boolean).map((l) => l.replace(/^ {2}- /, "").trim()) ?? [];
  const unscored = new Map<string, string>();
  const never = text.indexOf("Run and reported, but never scored:");
  if (never !== -1) {
    let reason = "";
    for (const line of text.slice(never).split("\n").slice(1)) {
      const group = /^ {2}([\w-]+) \(\d+\):$/.exec(line);
      if (group) reason = group[1]!;
      const entry = /^ {4}- (\S+) \[server\]$/.exec(line);
      if (entry) unscored.set(entry[1]!, reason);
    }
  }
  return { scored, unscored };
}

function expectedFailuresFile(revision: Revision, mode: Mode): string | undefined {
  const path = `${HERE}expected_failures.${revision}.${mode}.yml`;
  return existsSync(path) ? path : undefined;
}

async function suite(
  args: string[],
  scratch: string,
  options: { echo: boolean; budgetMs: number },
): Promise<{ code: number; out: string; timedOut: boolean }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-lock", "-A", CONFORMANCE_PACKAGE, ...args],
    cwd: scratch,
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
    env: { NO_COLOR: "1" },
  }).spawn();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    console.error(`The conformance suite overran its ${options.budgetMs / 1000} s budget: stopping it`);
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  }, options.budgetMs);
  let out = "";
  try {
    const decoder = new TextDecoder();
    for await (const chunk of child.stdout) {
      out += decoder.decode(chunk, { stream: true });
      if (options.echo) await Deno.stdout.write(chunk);
    }
    return { code: (await child.status).code, out, timedOut };
  } finally {
    clearTimeout(timer);
  }
}

async function runOne(url: string, revision: Revision, mode: Mode, scratch: string): Promise<RunResult> {
  const baseline = expectedFailuresFile(revision, mode);
  const args = [
    "server",
    "--url",
    url,
    "--requirements",
    revision,
    "--timeout",
    String(SCENARIO_TIMEOUT_MS),
    ...(baseline ? ["--expected-failures", baseline] : []),
  ];
  console.log(
    `\n### conformance ${revision} (${mode}): deno run -A ${CONFORMANCE_PACKAGE} ${args.join(" ")}`,
  );
  const started = performance.now();
  const { code, out, timedOut } = await suite(args, scratch, { echo: true, budgetMs: RUN_BUDGET_MS });
  const seconds = (performance.now() - started) / 1000;
  return { revision, mode, exitCode: code, seconds, timedOut, ...parseSummary(out) };
}

/**
 * One line per run, starting with its verdict (`ok` or `FAIL`, this project's gate): scored
 * scenarios that pass, those that fail only in checks the expected-failures file lists (counted
 * apart, so they never read as failures), unexpected failures, the checks in the same three kinds,
 * the unscored scenarios counted by the suite's reason for not scoring them, and the time.
 */
export function describeRun(r: RunResult, req: Requirements): { line: string; ok: boolean } {
  const scored = r.scenarios.filter((s) => req.scored.includes(s.name));
  const unscored = r.scenarios.filter((s) => !req.scored.includes(s.name));
  const sum = (list: ScenarioResult[], key: "passed" | "failed"): number =>
    list.reduce((n, s) => n + s[key], 0);
  const baselined = new Set(r.expectedFailures.map((entry) => entry.split(":")[0]!));
  const clean = scored.filter((s) => s.ok && !baselined.has(s.name));
  const expected = scored.filter((s) => baselined.has(s.name));
  const failing = scored.filter((s) => !s.ok && !baselined.has(s.name));
  const missing = req.scored.filter((name) => !r.scenarios.some((s) => s.name === name));
  const requiredBroken = REQUIRED_UNSCORED.filter((name) => req.unscored.has(name)).filter((name) =>
    unscored.some((s) => s.name === name && !s.ok) || !r.scenarios.some((s) => s.name === name)
  );
  // Unscored scenarios by the suite's reason: how many pass of how many run (the suite's own
  // output above names each).
  const byReason = (list: ScenarioResult[]): string => {
    const groups = new Map<string, ScenarioResult[]>();
    for (const s of list) {
      const reason = req.unscored.get(s.name) ?? "not scored";
      groups.set(reason, [...groups.get(reason) ?? [], s]);
    }
    return [...groups].map(([reason, g]) =>
      `${reason} ${g.filter((s) => s.ok && s.passed > 0).length}/${g.length} pass`
    ).join(", ");
  };
  const ok = r.exitCode === 0 && !r.timedOut && failing.length === 0 && missing.length === 0 &&
    requiredBroken.length === 0;
  const line = `${ok ? "ok  " : "FAIL"} ${r.revision} ${r.mode}: ` +
    `${clean.length}/${req.scored.length} scored scenarios pass` +
    (expected.length
      ? `, ${expected.length} more as expected (the expected-failures file: ${
        expected.map((s) => s.name).join(", ")
      })`
      : "") +
    (failing.length ? `, UNEXPECTED FAILURES: ${failing.map((s) => s.name).join(", ")}` : "") +
    `; checks ${sum(scored, "passed")} passed` +
    (sum(failing, "failed") ? `, ${sum(failing, "failed")} FAILED` : "") +
    (sum(expected, "failed") ? `, ${sum(expected, "failed")} expected to fail` : "") +
    (unscored.length ? `; not scored (not required unless named below): ${byReason(unscored)}` : "") +
    `; ${r.seconds.toFixed(1)} s` +
    (r.exitCode !== 0 ? `; suite exit ${r.exitCode}` : "") +
    (r.timedOut ? "; OVERRAN ITS TIME BUDGET" : "") +
    (missing.length ? `; scored scenarios not run: ${missing.join(", ")}` : "") +
    (requiredBroken.length ? `; required although unscored, failing: ${requiredBroken.join(", ")}` : "");
  return { line, ok };
}

function pick<T extends string>(value: string, all: readonly T[], flag: string): T[] {
  if (value === "both") return [...all];
  if ((all as readonly string[]).includes(value)) return [value as T];
  console.error(`Unknown ${flag} "${value}": use ${all.join(", ")} or both`);
  Deno.exit(2);
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      mode: { type: "string", default: "both" },
      requirements: { type: "string", default: "both" },
    },
  });
  const modes = pick(values.mode!, MODES, "--mode");
  const revisions = pick(values.requirements!, REVISIONS, "--requirements");
  const scratch = await Deno.makeTempDir({ prefix: "opendata-mcp-conformance-" });
  const started = performance.now();
  const lines: string[] = [];
  let ok = true;
  try {
    const requirements = new Map<Revision, Requirements>();
    for (const revision of revisions) {
      const listed = await suite(["list", "--requirements", revision], scratch, {
        echo: false,
        budgetMs: LIST_BUDGET_MS,
      });
      const req = parseRequirements(listed.out);
      if (listed.code !== 0 || listed.timedOut || req.scored.length === 0) {
        throw new Error(`Cannot read the ${revision} requirement set:\n${listed.out}`);
      }
      requirements.set(revision, req);
    }
    for (const mode of modes) {
      // One server per mode serves both revisions, as a deployment would.
      const server = await startHttpServer({
        args: ["--providers", "conformance", ...(mode === "stateless" ? ["--stateless"] : [])],
      });
      try {
        for (const revision of revisions) {
          const result = await runOne(`${server.origin}/mcp`, revision, mode, scratch);
          const described = describeRun(result, requirements.get(revision)!);
          lines.push(described.line);
          ok &&= described.ok;
        }
      } finally {
        const code = await server.stop("SIGTERM");
        if (code !== 0) {
          ok = false;
          lines.push(`${mode}: the server exited with ${code}`);
          console.error(`The ${mode} server exited with ${code}:\n${server.stderr()}`);
        }
      }
    }
  } finally {
    await Deno.remove(scratch, { recursive: true }).catch(() => {});
  }
  console.log(`\n### conformance summary (${CONFORMANCE_PACKAGE.replace("npm:", "")})`);
  for (const line of lines) console.log(line);
  console.log(`total ${((performance.now() - started) / 1000).toFixed(1)} s`);
  Deno.exit(ok ? 0 : 1);
}
