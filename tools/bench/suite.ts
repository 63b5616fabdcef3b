// The test suite's wall time: runs `deno task test` (format check, lint, type check, every test
// with coverage, the coverage gate) as a developer or CI does, timing each phase the task prints,
// and reports the slowest test files. The machine's load before the run is said beside the
// figures, since a loaded machine stretches them.
//
//   deno run -A tools/bench/suite.ts          prints the section
const ROOT = new URL("../../", import.meta.url).pathname;

/** One run of `deno task test`. */
export interface SuiteRun {
  ok: boolean;
  wallS: number;
  passed: number;
  failed: number;
  /** The test runner's own total, from its summary line. */
  testsS: number;
  /** Test files by the sum of their tests' times, slowest first. */
  slowest: { file: string; s: number }[];
  /** The 1-minute load average before the run (Linux), or undefined. */
  loadBefore: number | undefined;
  cores: number;
}

// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

/** Seconds of a Deno test duration (`812ms`, `1s`, `2m3s`, `450µs`). */
export function durationS(text: string): number {
  const m = /^(?:(\d+)m)?(?:([\d.]+)(ms|s|µs))?$/.exec(text);
  if (!m) return 0;
  const minutes = Number(m[1] ?? 0) * 60;
  const value = Number(m[2] ?? 0);
  const unit = m[3] === "ms" ? 1e-3 : m[3] === "µs" ? 1e-6 : 1;
  return minutes + value * unit;
}

/**
 * Reads the runner's output, run one file after another or in parallel: the summary, and each
 * file's time (its top-level tests summed).
 */
export function parseTestOutput(output: string): Pick<SuiteRun, "passed" | "failed" | "testsS" | "slowest"> {
  const text = output.replace(ANSI, "");
  const perFile = new Map<string, number>();
  let file = "";
  for (const line of text.split("\n")) {
    const running = /^running \d+ tests? from (\S+)/.exec(line);
    if (running) {
      file = running[1]!.replace(/^\.\//, "");
      continue;
    }
    // Run in parallel, each result line names its file: `./tests/x_test.ts => name ... ok (12ms)`.
    const named = /^(\S+) => .* \.\.\. (?:ok|FAILED|ignored) \(([^)]+)\)$/.exec(line);
    if (named) {
      const f = named[1]!.replace(/^\.\//, "");
      perFile.set(f, (perFile.get(f) ?? 0) + durationS(named[2]!));
      continue;
    }
    const done = /^\S.* \.\.\. (?:ok|FAILED|ignored) \(([^)]+)\)$/.exec(line);
    if (done && file) perFile.set(file, (perFile.get(file) ?? 0) + durationS(done[1]!));
  }
  const summary = [...text.matchAll(/^(?:ok|FAILED) \| (\d+) passed.*?\| (\d+) failed.*\(([^)]+)\)$/gm)].at(
    -1,
  );
  return {
    passed: Number(summary?.[1] ?? 0),
    failed: Number(summary?.[2] ?? 0),
    testsS: summary ? durationS(summary[3]!) : 0,
    slowest: [...perFile].map(([f, s]) => ({ file: f, s })).sort((a, b) => b.s - a.s),
  };
}

function loadAverage(): number | undefined {
  try {
    return Number(Deno.readTextFileSync("/proc/loadavg").split(" ")[0]);
  } catch {
    return undefined;
  }
}

/** Runs `deno task test` once in this checkout and times it. */
export async function runSuite(): Promise<SuiteRun> {
  const loadBefore = loadAverage();
  const started = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "test"],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const wallS = (performance.now() - started) / 1000;
  const dec = new TextDecoder();
  const parsed = parseTestOutput(dec.decode(out.stdout) + dec.decode(out.stderr));
  return { ok: out.success, wallS, loadBefore, cores: navigator.hardwareConcurrency, ...parsed };
}

/** The section of docs/BENCHMARKS.md. */
export function suiteSection(run: SuiteRun): string {
  const rows = run.slowest.slice(0, 10).map((f) => `| \`${f.file}\` | ${f.s.toFixed(1)} |`);
  const load = run.loadBefore === undefined
    ? ""
    : `, load average ${run.loadBefore.toFixed(2)} before the run`;
  return `## The test suite

\`deno task test\` as a developer or CI runs it (format check, lint, type check, every test with coverage,
the coverage gate), once, on ${run.cores} cores${load} (tools/bench/suite.ts):

| measure | value |
| --- | --- |
| wall time of the whole task | ${run.wallS.toFixed(0)} s (${(run.wallS / 60).toFixed(1)} min) |
| the test runner's own total | ${run.testsS.toFixed(0)} s |
| tests | ${run.passed} passed, ${run.failed} failed${run.ok ? "" : " (the task failed)"} |

The ten slowest test files (their tests' times added up; files run in parallel):

| file | s |
| --- | --- |
${rows.join("\n")}`;
}

if (import.meta.main) console.log(suiteSection(await runSuite()));
