// The one per-client quota (lib/output/quota.ts): one ledger that a project storage, the result
// exports and a job manager all ask, keyed by the client, with one error.
import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import { ToolError } from "../../lib/errors.ts";
import { ResultExports } from "../../lib/output/exports.ts";
import { JobManager } from "../../lib/output/jobs.ts";
import { QuotaLedger, UNLIMITED } from "../../lib/output/quota.ts";
import type { QuotaLimits } from "../../lib/output/quota.ts";
import { ProjectStorage } from "../../lib/output/storage.ts";

const HOG = "ip:203.0.113.9";
const VICTIM = "ip:198.51.100.1";

/** A ledger with `limits` over UNLIMITED, a FRED-like storage and the exports, in a scratch folder. */
function server(limits: Partial<QuotaLimits>, writes: "on" | "off" = "on") {
  const dir = Deno.makeTempDirSync({ prefix: "opendata-mcp-quota-" });
  const quota = new QuotaLedger({ writes, limits: { ...UNLIMITED, ...limits } });
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const storage = new ProjectStorage({
    root: `${dir}/fred`,
    subdirs: ["series"],
    clock,
    uriPrefix: "fred://files/",
    settingName: "FRED_STORAGE_DIR",
    quota,
  });
  const exports = new ResultExports({ dataDir: dir, clock, quota });
  const jobs = new JobManager({ clock, retentionMs: 3_600_000, idPrefix: "t-job", quota });
  const release = Promise.withResolvers<{ result: Record<string, unknown> }>();
  return {
    quota,
    storage,
    exports,
    jobs,
    /** A job's work that runs until the test ends. */
    running: () => release.promise,
    [Symbol.asyncDispose]: async () => {
      release.resolve({ result: {} });
      await jobs.close();
      Deno.removeSync(dir, { recursive: true });
    },
  };
}

async function refusal(p: Promise<unknown> | (() => unknown)): Promise<ToolError> {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (e) {
    assert.ok(e instanceof ToolError, String(e));
    return e;
  }
  assert.fail("expected a ToolError");
}

async function writeFile(
  storage: ProjectStorage,
  project: string,
  name: string,
  bytes: number,
): Promise<void> {
  const file = await storage.reserve(project, "series", name, "csv");
  try {
    file.charge(bytes);
    Deno.writeFileSync(file.path, new Uint8Array(bytes));
  } finally {
    storage.release(file);
  }
}

Deno.test("QuotaLedger counts a client's project files and result files together against one byte quota", async () => {
  // 64 KiB: the FRED project (its folder, subfolder and .project.json: 12 KiB) and a 32 KiB file
  // leave 20 KiB, less than the result file's folders and 16 KiB of text need.
  await using s = server({ bytes: 64 * 1024 });
  await writeFile(s.storage.forOwner("session:h1", HOG), "p", "a", 32 * 1024);
  const e = await refusal(
    s.exports.forCaller("worldbank", "session:h2", HOG).save({
      format: "md",
      text: "x".repeat(16 * 1024),
      description: "too much with the project's file",
    }),
  );
  assert.equal(e.errorType, "QUOTA_EXCEEDED");
  assert.match(e.message, /projects and result files together/);
  // Alone (another client), the same result file fits.
  const saved = await s.exports.forCaller("worldbank", "session:v", VICTIM).save({
    format: "md",
    text: "x".repeat(16 * 1024),
    description: "fits",
  });
  assert.equal(Deno.readTextFileSync(saved.path).length, 16 * 1024);
});

Deno.test("QuotaLedger counts result files a client wrote before a project file it writes now", async () => {
  await using s = server({ bytes: 64 * 1024 });
  await s.exports.forCaller("worldbank", "session:h1", HOG).save({
    format: "md",
    text: "x".repeat(32 * 1024),
    description: "first",
  });
  const e = await refusal(writeFile(s.storage.forOwner("session:h2", HOG), "p", "a", 24 * 1024));
  assert.equal(e.errorType, "QUOTA_EXCEEDED");
  assert.deepEqual(
    [...Deno.readDirSync(s.storage.forOwner("session:h2", HOG).projectPath("p") + "/series")],
    [],
    "the refused file is not kept",
  );
});

Deno.test("QuotaLedger: one client at its quota does not block another, nor stdio", async () => {
  await using s = server({ projects: 2, bytes: 48 * 1024, jobs: 1 });
  await s.storage.forOwner("session:h1", HOG).ensureProject("one");
  await s.storage.forOwner("session:h2", HOG).ensureProject("two");
  assert.equal(
    (await refusal(s.storage.forOwner("session:h3", HOG).ensureProject("three"))).errorType,
    "QUOTA_EXCEEDED",
  );
  const forever = s.running;
  s.jobs.start({ kind: "k", request: {}, owner: "session:h1", client: HOG, run: forever });
  assert.equal(
    (await refusal(() =>
      s.jobs.start({ kind: "k", request: {}, owner: "session:h1", client: HOG, run: forever })
    ))
      .errorType,
    "QUOTA_EXCEEDED",
  );
  // The victim's projects, files and jobs are its own.
  const victim = s.storage.forOwner("session:v", VICTIM);
  await victim.ensureProject("one");
  await victim.ensureProject("two");
  await writeFile(victim, "one", "f", 16 * 1024);
  assert.doesNotThrow(() => s.jobs.checkCapacity(VICTIM));
  s.jobs.start({ kind: "k", request: {}, owner: "session:v", client: VICTIM, run: forever });
  // Stdio has one user and no quota.
  for (const name of ["a", "b", "c"]) await s.storage.forOwner(undefined).ensureProject(name);
  s.jobs.start({ kind: "k", request: {}, run: forever });
  s.jobs.start({ kind: "k", request: {}, run: forever });
});

Deno.test("QuotaLedger's one error says what is full, the limit and the way on; only running jobs are retryable", async () => {
  await using s = server({ projects: 1, bytes: 32 * 1024, jobs: 1 });
  const hog = s.storage.forOwner("session:h", HOG);
  await hog.ensureProject("p");
  const projects = (await refusal(hog.ensureProject("q"))).toPayload();
  assert.deepEqual(
    { error_type: projects.error_type, retryable: projects.retryable, message: projects.message },
    {
      error_type: "QUOTA_EXCEEDED",
      retryable: false,
      message:
        "Your quota on this server is full: your client keeps 1 projects, the most one client may (1); no new project was created",
    },
  );
  assert.match(String(projects.hint), /project list tool.*raise MCP_QUOTA_PROJECTS/);

  const file = await hog.reserve("p", "series", "f", "csv");
  const bytes = (await refusal(() => file.charge(64 * 1024))).toPayload();
  hog.release(file);
  assert.equal(bytes.error_type, "QUOTA_EXCEEDED");
  assert.equal(bytes.retryable, false);
  assert.match(
    bytes.message,
    /^Your quota on this server is full: your client's files take [\d.]+ MiB of the 0\.031 MiB/,
  );
  assert.match(String(bytes.hint), /project files tool.*raise MCP_QUOTA_MB/);

  s.jobs.start({ kind: "k", request: {}, owner: "session:h", client: HOG, run: s.running });
  const jobs = (await refusal(() => s.jobs.checkCapacity(HOG))).toPayload();
  assert.equal(jobs.error_type, "QUOTA_EXCEEDED");
  assert.equal(jobs.retryable, true, "a running job ends on its own");
  assert.equal(jobs.retry_after_s, 30);
  assert.match(jobs.message, /your client runs 1 background jobs, the most one client may run at once \(1\)/);
  assert.match(String(jobs.hint), /job cancel tool.*raise MCP_QUOTA_JOBS/);
});

Deno.test("QuotaLedger does not count the result files' per-provider folders as the client's projects", async () => {
  await using s = server({ projects: 1 });
  for (const provider of ["worldbank", "boj", "snl"]) {
    await s.exports.forCaller(provider, "session:h", HOG).save({
      format: "md",
      text: "x",
      description: "one",
    });
  }
  await s.storage.forOwner("session:h", HOG).ensureProject("mine");
  assert.equal(
    (await refusal(s.storage.forOwner("session:h", HOG).ensureProject("second"))).errorType,
    "QUOTA_EXCEEDED",
  );
});

Deno.test("QuotaLedger with writes off refuses projects, files and jobs, stdio included, but lists", async () => {
  await using s = server({}, "off");
  await assert.rejects(
    s.storage.forOwner("a").ensureProject("p"),
    /read-only \(MCP_WRITES=off\): it does not create projects/,
  );
  await assert.rejects(
    s.storage.forOwner(undefined).reserve("p", "series", "f", "csv"),
    /does not write files/,
  );
  await assert.rejects(
    s.exports.forCaller("boj", undefined).save({ format: "md", text: "x", description: "d" }),
    /does not write files/,
  );
  assert.match(
    (await refusal(() => s.jobs.start({ kind: "k", request: {}, run: s.running }))).message,
    /does not start background jobs/,
  );
  assert.deepEqual(await s.storage.forOwner("a").listProjects(), []);
});
