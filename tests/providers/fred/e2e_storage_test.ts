// Storage limits end to end: FRED_MAX_PROJECTS and FRED_MAX_STORAGE_MB refuse new projects and
// writes with STORAGE_LIMIT, a job that reaches the byte limit fails and leaves no file, and
// deleting files makes room again.
import assert from "node:assert/strict";
import type { StdioSession } from "../../harness/spawn.ts";
import { errorOf, ok } from "../../harness/results.ts";
import { openProvider } from "../../harness/provider.ts";
import { startFakeFred } from "./fake_fred.ts";
import { fred } from "./_helpers.ts";

type Result = Awaited<ReturnType<StdioSession["client"]["callTool"]>>;

/** Every file under `dir`, hidden ones included. */
function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) out.push(...walk(path));
    else out.push(path);
  }
  return out;
}

Deno.test("fred storage limits refuse new projects and writes with STORAGE_LIMIT and keep no partial file", async (t) => {
  await using fake = startFakeFred();
  await using s = await openProvider(
    fred({
      fake,
      settings: { job_row_threshold: 20_000 },
      env: { FRED_MAX_PROJECTS: "2", FRED_MAX_STORAGE_MB: "0.5" },
    }),
  );
  const store = `${s.home}/.local/share/opendata-mcp/fred`;
  const call = (name: string, args: Record<string, unknown>): Promise<Result> =>
    s.client.callTool({ name, arguments: args });

  await t.step("the third project is refused, by the create tool and by a file write alike", async () => {
    assert.equal(ok(await call("fred_project_create", { project_name: "alpha" }))["created"], true);
    assert.equal(ok(await call("fred_project_create", { project_name: "beta" }))["created"], true);
    for (
      const r of [
        await call("fred_project_create", { project_name: "gamma" }),
        await call("fred_series", { operation: "get", series_id: "GNPCA", output: "file" }),
      ]
    ) {
      const e = errorOf(r);
      assert.equal(e["error_type"], "STORAGE_LIMIT");
      assert.equal(e["retryable"], false);
      assert.match(String(e["message"]), /holds 2 projects, the most allowed \(2\)/);
      assert.match(String(e["hint"]), /FRED_MAX_PROJECTS/);
    }
    assert.deepEqual(Deno.readDirSync(store).toArray().map((e) => e.name).sort(), ["alpha", "beta"]);
    assert.equal(
      ok(await call("fred_project_create", { project_name: "alpha" }))["created"],
      false,
      "an existing project is still fine",
    );
  });

  await t.step("a job that passes the byte limit fails with STORAGE_LIMIT and leaves no file", async () => {
    const accepted = ok(
      await call("fred_series", { operation: "get_observations", series_id: "BIG", project: "alpha" }),
    );
    assert.equal(accepted["status"], "accepted");
    const done = ok(await call("fred_job_status", { job_id: accepted["job_id"], wait_seconds: 30 }));
    assert.equal(done["status"], "failed");
    const error = done["error"] as Record<string, string>;
    assert.equal(error["code"], "STORAGE_LIMIT");
    assert.match(error["message"]!, /of the 0\.5 MB allowed; the partial file was removed/);
    assert.deepEqual(walk(`${store}/alpha/series`), [], "neither the file nor its partial remains");
  });

  await t.step("a write in the call that passes the limit fails the same way", async () => {
    const e = errorOf(
      await call("fred_series", {
        operation: "get_observations",
        series_id: "BIG",
        limit: 20_000,
        project: "alpha",
      }),
    );
    assert.equal(e["error_type"], "STORAGE_LIMIT");
    assert.match(String(e["hint"]), /Delete files or projects .* or raise FRED_MAX_STORAGE_MB/);
    assert.deepEqual(walk(`${store}/alpha/series`), []);
  });

  await t.step(
    "small files still fit, a full folder refuses at once, and deleting files makes room",
    async () => {
      const small = ok(
        await call("fred_series", {
          operation: "get_observations",
          series_id: "GNPCA",
          output: "file",
          project: "beta",
        }),
      );
      assert.equal(small["rows_written"], 84);
      // A file the user put there fills the folder.
      Deno.writeFileSync(`${store}/beta/series/mine.bin`, new Uint8Array(600 * 1024));
      const before = fake.requests.length;
      const full = errorOf(
        await call("fred_series", { operation: "get", series_id: "GNPCA", output: "file", project: "beta" }),
      );
      assert.equal(full["error_type"], "STORAGE_LIMIT");
      assert.match(String(full["message"]), /The storage folder is full/);
      assert.ok(fake.requests.length <= before + 1, "at most the one request that found the data");
      Deno.removeSync(`${store}/beta/series/mine.bin`);
      const again = ok(
        await call("fred_series", { operation: "get", series_id: "GNPCA", output: "file", project: "beta" }),
      );
      assert.equal(again["rows_written"], 1);
    },
  );
});
