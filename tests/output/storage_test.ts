import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import { ToolError } from "../../lib/errors.ts";
import { isInside, ownerHash, ProjectStorage } from "../../lib/output/storage.ts";

const SUBDIRS = ["series", "maps"];

function storageIn(root: string): ProjectStorage {
  return new ProjectStorage({
    root,
    subdirs: SUBDIRS,
    clock: new FakeClock(Date.UTC(2025, 9, 8, 14, 30, 22)),
    uriPrefix: "test://files/",
    settingName: "TEST_STORAGE_DIR",
  });
}

async function rejectsWith(p: Promise<unknown>, type: string): Promise<ToolError> {
  let caught: unknown;
  try {
    await p;
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof ToolError, `expected ToolError ${type}, got ${caught}`);
  assert.equal(caught.errorType, type);
  return caught;
}

Deno.test("ProjectStorage.ensureProject() creates the layout and .project.json once", async () => {
  const root = `${Deno.makeTempDirSync()}/store`;
  const storage = storageIn(root);
  const first = await storage.ensureProject("study", "Inflation study");
  assert.equal(first.created, true);
  assert.deepEqual(first.subdirs, SUBDIRS);
  for (const sub of SUBDIRS) assert.ok(Deno.statSync(`${root}/study/${sub}`).isDirectory);
  const meta = JSON.parse(Deno.readTextFileSync(`${root}/study/.project.json`));
  assert.equal(meta.description, "Inflation study");
  assert.equal(meta.created, "2025-10-08T14:30:22.000Z");
  const again = await storage.ensureProject("study", "Changed");
  assert.equal(again.created, false);
  assert.equal(
    JSON.parse(Deno.readTextFileSync(`${root}/study/.project.json`)).description,
    "Inflation study",
  );
});

Deno.test("ProjectStorage.reserve() never hands out a taken name", async () => {
  const root = Deno.makeTempDirSync();
  const storage = storageIn(root);
  const a = await storage.reserve("p", "series", "gdp", "csv");
  const b = await storage.reserve("p", "series", "gdp", "csv");
  assert.equal(a.name, "gdp.csv");
  assert.equal(b.name, "gdp_1.csv", "a pending reservation counts as taken");
  assert.equal(a.relativePath, "series/gdp.csv");
  assert.equal(a.uri, "test://files/p/series/gdp.csv");
  assert.equal(a.tempPath, `${root}/p/series/.gdp.csv.partial`);
  Deno.writeTextFileSync(a.path, "x");
  storage.release(a);
  storage.release(b);
  const c = await storage.reserve("p", "series", "gdp.csv", "csv");
  assert.equal(c.name, "gdp_1.csv", "an existing file is never overwritten");
  await rejectsWith(storage.reserve("p", "series", "../gdp", "csv"), "PATH_SECURITY_ERROR");
  await rejectsWith(storage.reserve("../p", "series", "gdp", "csv"), "PATH_SECURITY_ERROR");
});

Deno.test("ProjectStorage refuses a project or folder that links outside the root", async () => {
  const base = Deno.makeTempDirSync();
  const outside = `${base}/outside`;
  Deno.mkdirSync(outside);
  const root = `${base}/root`;
  Deno.mkdirSync(root);
  Deno.symlinkSync(outside, `${root}/linked`);
  const storage = storageIn(root);
  await rejectsWith(storage.ensureProject("linked"), "PATH_SECURITY_ERROR");
  await storage.ensureProject("real");
  Deno.removeSync(`${root}/real/maps`, { recursive: true });
  Deno.symlinkSync(outside, `${root}/real/maps`);
  await rejectsWith(storage.reserve("real", "maps", "shapes", "json"), "PATH_SECURITY_ERROR");
  assert.deepEqual([...Deno.readDirSync(outside)], [], "nothing was written outside");
});

Deno.test("ProjectStorage lists projects and files with rows from .project.json, hiding partial files", async () => {
  const root = Deno.makeTempDirSync();
  const storage = storageIn(root);
  await storage.ensureProject("b-project", "Second");
  const small = await storage.reserve("a-project", "series", "small", "csv");
  Deno.writeTextFileSync(small.path, "date,value\r\n2020-01-01,1\r\n");
  await storage.recordFile("a-project", small.relativePath, {
    rows: 1,
    format: "csv",
    created: "2025-10-08T14:30:22Z",
  });
  const big = await storage.reserve("a-project", "maps", "big", "json");
  Deno.writeTextFileSync(big.path, "x".repeat(5000));
  Deno.writeTextFileSync(`${root}/a-project/series/.pending.csv.partial`, "half");

  const projects = await storage.listProjects();
  assert.deepEqual(projects.map((p) => [p.name, p.file_count, p.description]), [
    ["a-project", 2, null],
    ["b-project", 0, "Second"],
  ]);
  assert.equal(projects[0]!.total_size_mb, Math.round(((5000 + 27) / 1_048_576) * 1000) / 1000);

  const bySize = await storage.listFiles("a-project", { sortBy: "size" });
  assert.deepEqual(bySize.files.map((f) => f.path), ["maps/big.json", "series/small.csv"]);
  assert.equal(bySize.total_files, 2);
  assert.equal(bySize.files[1]!.rows, 1);
  assert.equal(bySize.files[0]!.rows, null);
  assert.equal(bySize.files[1]!.resource_uri, "test://files/a-project/series/small.csv");
  const byName = await storage.listFiles("a-project", { sortBy: "name", limit: 1 });
  assert.deepEqual(byName.files.map((f) => f.path), ["maps/big.json"]);
  assert.equal(byName.total_files, 2, "totals count every file, not just those listed");
  const series = await storage.listFiles("a-project", { subdir: "series" });
  assert.deepEqual(series.files.map((f) => f.name), ["small.csv"]);
  await rejectsWith(storage.listFiles("nope"), "NOT_FOUND");
  const all = await storage.allFiles(10);
  assert.equal(all.length, 2);
});

Deno.test("ProjectStorage.recordFile() recovers from an unreadable .project.json", async () => {
  const root = Deno.makeTempDirSync();
  const storage = storageIn(root);
  await storage.ensureProject("study", "Inflation study");
  // Cut short, as a crash during a write would leave it.
  Deno.writeTextFileSync(`${root}/study/.project.json`, '{"name": "study", "files": {"ser');
  const file = await storage.reserve("study", "series", "gdp", "csv");
  Deno.writeTextFileSync(file.path, "date,value\r\n");
  storage.release(file);
  await storage.recordFile("study", file.relativePath, {
    rows: 0,
    format: "csv",
    created: "2025-10-08T14:30:22.000Z",
  });
  const meta = JSON.parse(Deno.readTextFileSync(`${root}/study/.project.json`));
  assert.equal(meta.files["series/gdp.csv"].rows, 0);
  assert.deepEqual(
    [...Deno.readDirSync(`${root}/study`)].map((e) => e.name).filter((n) => n.startsWith(".")),
    [
      ".project.json",
    ],
    "no half-written copy is left",
  );
  const listed = await storage.listFiles("study");
  assert.equal(listed.files[0]!.rows, 0);
});

Deno.test("ProjectStorage.listProjects() of a root not yet created is empty", async () => {
  const storage = storageIn(`${Deno.makeTempDirSync()}/not/yet`);
  assert.deepEqual(await storage.listProjects(), []);
});

Deno.test("ProjectStorage.resolveFile() finds stored files and refuses escapes and links", async () => {
  const base = Deno.makeTempDirSync();
  const root = `${base}/root`;
  Deno.writeTextFileSync(`${base}/secret.txt`, "secret");
  const storage = storageIn(root);
  const file = await storage.reserve("p", "series", "gdp", "csv");
  Deno.writeTextFileSync(file.path, "a,b\r\n");
  const found = await storage.resolveFile("p", "series/gdp.csv");
  assert.equal(found.path, file.path);
  assert.equal(found.format, "csv");
  await rejectsWith(storage.resolveFile("p", "../../secret.txt"), "PATH_SECURITY_ERROR");
  await rejectsWith(storage.resolveFile("p", "series/../../../secret.txt"), "PATH_SECURITY_ERROR");
  await rejectsWith(storage.resolveFile("..", "secret.txt"), "PATH_SECURITY_ERROR");
  await rejectsWith(storage.resolveFile("p", ".project.json"), "PATH_SECURITY_ERROR");
  await rejectsWith(storage.resolveFile("p", "series/missing.csv"), "NOT_FOUND");
  Deno.symlinkSync(`${base}/secret.txt`, `${root}/p/series/link.csv`);
  await rejectsWith(storage.resolveFile("p", "series/link.csv"), "PATH_SECURITY_ERROR");
});

Deno.test("isInside() is strict about prefixes", () => {
  assert.equal(isInside("/data/fred", "/data/fred/p/x.csv"), true);
  assert.equal(isInside("/data/fred", "/data/fred"), false);
  assert.equal(isInside("/data/fred", "/data/fred-other/x.csv"), false);
  assert.equal(isInside("/data/fred", "/data/x.csv"), false);
});

function limited(root: string, limits: { maxProjects?: number; maxBytes?: number }): ProjectStorage {
  return new ProjectStorage({
    root,
    subdirs: SUBDIRS,
    clock: new FakeClock(Date.UTC(2025, 9, 8, 14, 30, 22)),
    uriPrefix: "test://files/",
    settingName: "TEST_STORAGE_DIR",
    limitSettings: { projects: "TEST_MAX_PROJECTS", bytes: "TEST_MAX_MB" },
    ...limits,
  });
}

Deno.test("ProjectStorage.forOwner() keeps each owner's projects apart, the owner's hash in .project.json", async () => {
  const root = Deno.makeTempDirSync();
  const storage = storageIn(root);
  const a = storage.forOwner("session-a");
  const b = storage.forOwner("session-b");
  assert.equal(storage.forOwner(undefined), storage);
  assert.equal(storage.forOwner("session-a"), a, "one view per owner");
  await a.ensureProject("study", "A's");
  const file = await a.reserve("study", "series", "gdp", "csv");
  Deno.writeTextFileSync(file.path, "date,value\r\n");
  a.release(file);
  assert.deepEqual((await a.listProjects()).map((p) => p.name), ["study"]);
  assert.deepEqual(await b.listProjects(), []);
  assert.deepEqual(await storage.listProjects(), [], "the root's own projects (stdio) are separate");
  await rejectsWith(b.listFiles("study"), "NOT_FOUND");
  await rejectsWith(b.resolveFile("study", "series/gdp.csv"), "NOT_FOUND");
  assert.equal((await a.resolveFile("study", "series/gdp.csv")).format, "csv");
  assert.equal((await b.ensureProject("study")).created, true, "B's study is its own");
  const meta = JSON.parse(Deno.readTextFileSync(`${a.base}/study/.project.json`));
  assert.equal(meta.owner, ownerHash("session-a"));
  assert.ok(a.base.startsWith(`${root}/_owners/`));
  assert.ok(!Deno.readTextFileSync(`${a.base}/study/.project.json`).includes("session-a"));
  // A .project.json naming another owner is not found either (a folder copied by hand).
  Deno.mkdirSync(`${b.base}/copied/series`, { recursive: true });
  Deno.writeTextFileSync(`${b.base}/copied/.project.json`, JSON.stringify({ ...meta, name: "copied" }));
  await rejectsWith(b.listFiles("copied"), "NOT_FOUND");
  assert.deepEqual((await b.listProjects()).map((p) => p.name), ["study"]);
});

Deno.test("ProjectStorage refuses a project past maxProjects, counting every owner's", async () => {
  const storage = limited(Deno.makeTempDirSync(), { maxProjects: 2 });
  await storage.ensureProject("one");
  await storage.forOwner("x").ensureProject("two");
  const e = await rejectsWith(storage.forOwner("y").ensureProject("three"), "STORAGE_LIMIT");
  assert.match(e.hint ?? "", /TEST_MAX_PROJECTS/);
  await rejectsWith(storage.reserve("four", "series", "f", "csv"), "STORAGE_LIMIT");
  assert.equal((await storage.ensureProject("one")).created, false, "existing projects stay usable");
});

Deno.test("ProjectStorage counts stored and in-flight bytes in 4 KiB blocks against maxBytes", async () => {
  const root = Deno.makeTempDirSync();
  const storage = limited(root, { maxBytes: 64 * 1024 });
  // The project and its 2 folders: 3 blocks; .project.json: 1; the file being written: 1 at first.
  const file = await storage.reserve("p", "series", "data", "csv");
  assert.equal(await storage.storedBytes(), 5 * 4096);
  file.charge(5000);
  assert.equal(await storage.storedBytes(), 6 * 4096, "5,000 bytes take two blocks");
  const e = (() => {
    try {
      file.charge(64 * 1024);
    } catch (err) {
      return err;
    }
  })();
  assert.ok(e instanceof ToolError && e.errorType === "STORAGE_LIMIT");
  assert.match(e.message, /0\.023 MB stored of the 0\.063 MB allowed/);
  assert.match(e.hint ?? "", /TEST_MAX_MB/);
  storage.release(file);
  assert.equal(await storage.storedBytes(), 4 * 4096, "an abandoned file frees its bytes");
  Deno.writeFileSync(`${root}/p/series/big.bin`, new Uint8Array(60 * 1024));
  await rejectsWith(storage.reserve("p", "series", "more", "csv"), "STORAGE_LIMIT");
  Deno.removeSync(`${root}/p/series/big.bin`);
  storage.release(await storage.reserve("p", "series", "more", "csv"));
});

Deno.test("ProjectStorage at a full maxBytes removes the oldest project of the client holding the most, never the asker's", async () => {
  const root = Deno.makeTempDirSync();
  // A client's share is 1 MiB / 16 = 64 KiB.
  const storage = limited(root, { maxBytes: 1024 * 1024 });
  const hog = storage.forOwner("session-hog", "ip:203.0.113.1");
  const small = storage.forOwner("session-small", "ip:198.51.100.2");
  const { path: old } = await hog.ensureProject("old");
  const { path: newer } = await hog.ensureProject("newer");
  const mine = await small.reserve("mine", "series", "first", "csv");
  small.release(mine);
  // Files the hog left from before (a larger share, or a lowered cap): the storage is full.
  Deno.writeFileSync(`${old}/series/a.bin`, new Uint8Array(700 * 1024));
  Deno.writeFileSync(`${newer}/series/b.bin`, new Uint8Array(300 * 1024));
  const past = new Date(Date.now() - 3_600_000);
  for (const p of [`${old}/series/a.bin`, `${old}/series`, `${old}/.project.json`, old]) {
    Deno.utimeSync(p, past, past);
  }
  assert.ok(await storage.storedBytes() >= 1024 * 1024, "the storage is full");

  const file = await small.reserve("mine", "series", "second", "csv");
  small.release(file);
  assert.throws(
    () => Deno.statSync(old),
    Deno.errors.NotFound,
    "the hog's least recently touched project went",
  );
  assert.ok(Deno.statSync(newer).isDirectory, "one project was enough");
  assert.ok(Deno.statSync(`${root}/_owners/${ownerHash("session-small")}/mine`).isDirectory);

  // The hog past its share is refused, and its own files stay.
  const e = await rejectsWith(hog.reserve("newer", "series", "more", "csv"), "QUOTA_EXCEEDED");
  assert.match(e.message, /its share \(at most 1\/16 of the 1 MB it holds for all clients\)/);
  assert.ok(Deno.statSync(`${newer}/series/b.bin`).isFile);
});
