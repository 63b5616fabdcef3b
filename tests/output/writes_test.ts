import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import { ToolError } from "../../lib/errors.ts";
import { ResultExports } from "../../lib/output/exports.ts";
import { JobManager } from "../../lib/output/jobs.ts";
import { ProjectStorage } from "../../lib/output/storage.ts";
import type { WritePolicy } from "../../lib/output/writes.ts";

const BOUNDED: WritePolicy = {
  mode: "bounded",
  maxProjectsPerOwner: 2,
  maxBytesPerOwner: 64 * 1024,
  maxJobsPerOwner: 1,
};

function storage(writes: WritePolicy): ProjectStorage {
  return new ProjectStorage({
    root: `${Deno.makeTempDirSync()}/store`,
    subdirs: ["series"],
    clock: new FakeClock(),
    uriPrefix: "test://files/",
    settingName: "TEST_STORAGE_DIR",
    writes,
  });
}

function errorOf(fn: () => unknown): ToolError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ToolError);
    return e;
  }
  assert.fail("expected a ToolError");
}

Deno.test("ProjectStorage with writes bounded caps each owner's bytes, counting files as they grow", async () => {
  const store = storage(BOUNDED);
  const alice = store.forOwner("alice");
  const file = await alice.reserve("p", "series", "a", "csv");
  file.charge(32 * 1024);
  const e = errorOf(() => file.charge(40 * 1024));
  assert.equal(e.errorType, "STORAGE_LIMIT");
  assert.match(e.message, /your files take [\d.]+ MB \([\d.]+ MB per client\)/);
  // Bob's share is his own.
  const bobs = await store.forOwner("bob").reserve("p", "series", "b", "csv");
  bobs.charge(32 * 1024);
});

Deno.test("ProjectStorage with writes off refuses new projects and files but lists and reads", async () => {
  const store = storage({ ...BOUNDED, mode: "off" });
  await assert.rejects(
    store.forOwner("a").ensureProject("p"),
    /read-only \(MCP_WRITES=off\): it does not create projects/,
  );
  await assert.rejects(store.forOwner("a").reserve("p", "series", "f", "csv"), /does not write files/);
  assert.deepEqual(await store.forOwner("a").listProjects(), []);
});

Deno.test("JobManager with writes bounded runs one job per owner at a time; with writes off none", () => {
  const jobs = new JobManager({
    clock: new FakeClock(),
    retentionMs: 60_000,
    idPrefix: "t",
    writes: BOUNDED,
  });
  const forever = () => new Promise<never>(() => {});
  try {
    jobs.start({ kind: "k", request: {}, owner: "alice", run: forever });
    assert.equal(
      errorOf(() => jobs.start({ kind: "k", request: {}, owner: "alice", run: forever })).errorType,
      "STORAGE_LIMIT",
    );
    jobs.start({ kind: "k", request: {}, owner: "bob", run: forever });
  } finally {
    void jobs.close();
  }
  const off = new JobManager({
    clock: new FakeClock(),
    retentionMs: 60_000,
    idPrefix: "t",
    writes: { ...BOUNDED, mode: "off" },
  });
  assert.match(
    errorOf(() => off.start({ kind: "k", request: {}, run: forever })).message,
    /does not start background jobs/,
  );
  void off.close();
});

Deno.test("ResultExports with writes bounded caps an owner's bytes, not the per-provider folders it never named", async () => {
  const dataDir = Deno.makeTempDirSync({ prefix: "opendata-mcp-exports-" });
  try {
    // One project per owner allowed: output: "file" of several providers still works (each
    // provider's results are a folder of the server's, not a project the caller made).
    const exports = new ResultExports({
      dataDir,
      clock: new FakeClock(),
      writes: { ...BOUNDED, maxProjectsPerOwner: 1 },
    });
    for (const provider of ["worldbank", "boj", "snl"]) {
      const saved = await exports.forCaller(provider, "client:ip:203.0.113.9").save({
        format: "md",
        text: "x",
        description: "one line",
      });
      assert.match(saved.uri, new RegExp(`^opendata://files/${provider}/`));
    }
    const big = "x".repeat(80 * 1024);
    await assert.rejects(
      exports.forCaller("wikipedia", "client:ip:203.0.113.9").save({
        format: "md",
        text: big,
        description: "big",
      }),
      /your files take [\d.]+ MB \([\d.]+ MB per client\)/,
    );
  } finally {
    Deno.removeSync(dataDir, { recursive: true });
  }
});
