// Over HTTP a FRED job, project and file belong to the session that made them: another session
// cannot see, read the status of or cancel the job, nor list or read the projects and files.
import assert from "node:assert/strict";
import { startHttpServer } from "../../harness/spawn_http.ts";
import { removeHome, scratchHome } from "../../harness/spawn.ts";
import type { Client } from "../../harness/sdk_client.ts";
import { connectHttp } from "../../harness/provider.ts";
import {
  Client as Client2,
  MODERN,
  StreamableHTTPClientTransport as Http2,
} from "../../harness/sdk2_client.ts";
import { errorOf, ok } from "../../harness/results.ts";
import { fredConfig, routeStuckSeries, startFakeFred } from "./fake_fred.ts";

Deno.test("fred jobs and projects over HTTP belong to the session that made them", async (t) => {
  await using fake = startFakeFred();
  // STUCK: 50,000 rows; the second page waits until the test ends, so the job stays running.
  const stuck = routeStuckSeries(fake, 50_000);
  const home = scratchHome(fredConfig(fake.origin));
  await using _home = { [Symbol.asyncDispose]: () => Promise.resolve(removeHome(home)) };
  await using server = await startHttpServer({ args: ["--providers", "fred"], home });
  const connect = async () => {
    const { client, sessionId } = await connectHttp(server.origin);
    return { client, session: sessionId };
  };
  const a = await connect();
  const b = await connect();
  assert.notEqual(a.session, b.session);
  const call = (c: Client, name: string, args: Record<string, unknown>) =>
    c.callTool({ name, arguments: args });

  try {
    let jobId = "";
    await t.step("session A starts a job; session B cannot see, read or cancel it", async () => {
      const accepted = ok(
        await call(a.client, "fred_series", { operation: "get_observations", series_id: "STUCK" }),
      );
      jobId = String(accepted["job_id"]);
      for (
        const [name, args] of [
          ["fred_job_status", { job_id: jobId }],
          ["fred_job_status", { job_id: jobId, wait_seconds: 1 }],
          ["fred_job_cancel", { job_id: jobId }],
        ] as const
      ) {
        const e = errorOf(await call(b.client, name, args));
        assert.equal(e["error_type"], "JOB_NOT_FOUND", name);
        assert.equal(
          e["message"],
          `Job not found: "${jobId}"`,
          "the same answer as for a job that never was",
        );
      }
      assert.equal(ok(await call(b.client, "fred_job_list", {}))["total"], 0);
      const status = ok(await call(a.client, "fred_job_status", { job_id: jobId }));
      assert.ok(["accepted", "processing"].includes(String(status["status"])), "B's cancel changed nothing");
      assert.equal(ok(await call(a.client, "fred_job_list", {}))["total"], 1);
    });

    let uri = "";
    await t.step("session B cannot list or read session A's projects and files", async () => {
      ok(await call(a.client, "fred_project_create", { project_name: "alpha", description: "A's" }));
      const written = ok(
        await call(a.client, "fred_series", {
          operation: "get_observations",
          series_id: "GNPCA",
          output: "file",
          project: "alpha",
        }),
      );
      uri = String(written["resource_uri"]);
      assert.deepEqual(ok(await call(b.client, "fred_project_list", {}))["projects"] as unknown[], []);
      const e = errorOf(await call(b.client, "fred_project_files", { project_name: "alpha" }));
      assert.equal(e["error_type"], "NOT_FOUND");
      assert.deepEqual(
        (await b.client.listResources()).resources.filter((r) => r.uri.startsWith("fred://")),
        [],
      );
      await assert.rejects(b.client.readResource({ uri }), /There is no file/);

      const mine = ok(await call(a.client, "fred_project_list", {}))["projects"] as Record<string, unknown>[];
      // "default" holds the running job's file-to-be (hidden until written).
      assert.deepEqual(mine.map((p) => [p["name"], p["file_count"]]), [["alpha", 1], ["default", 0]]);
      assert.ok((await a.client.listResources()).resources.some((r) => r.uri === uri));
      assert.match(
        ((await a.client.readResource({ uri })).contents[0] as { text: string }).text,
        /^date,value/,
      );
    });

    await t.step("session B's project of the same name is its own", async () => {
      assert.equal(
        ok(await call(b.client, "fred_project_create", { project_name: "alpha" }))["created"],
        true,
      );
      assert.equal(
        ok(await call(b.client, "fred_project_files", { project_name: "alpha" }))["total_files"],
        0,
      );
      assert.equal(
        ok(await call(a.client, "fred_project_files", { project_name: "alpha" }))["total_files"],
        1,
      );
      // On disk: one folder per owner, named by a hash; .project.json holds the hash, never the session id.
      const owners = `${home}/.local/share/opendata-mcp/fred/_owners`;
      const folders = Deno.readDirSync(owners).toArray().map((e) => e.name);
      assert.equal(folders.length, 2);
      for (const folder of folders) {
        const meta = Deno.readTextFileSync(`${owners}/${folder}/alpha/.project.json`);
        assert.equal(JSON.parse(meta).owner, folder);
        assert.ok(!meta.includes(a.session) && !meta.includes(b.session));
      }
    });

    await t.step("a request without a session works as its principal, apart from the sessions", async () => {
      const modern = new Client2({ name: "owners-test", version: "0" }, {
        versionNegotiation: { mode: { pin: MODERN } },
      });
      await modern.connect(new Http2(new URL(`${server.origin}/mcp`)));
      try {
        const call2 = async (name: string, args: Record<string, unknown>) =>
          await modern.callTool({ name, arguments: args }) as Parameters<typeof ok>[0];
        assert.equal(ok(await call2("fred_job_list", {}))["total"], 0, "A's job is not the principal's");
        assert.equal(
          errorOf(await call2("fred_job_cancel", { job_id: jobId }))["error_type"],
          "JOB_NOT_FOUND",
        );
        assert.deepEqual(ok(await call2("fred_project_list", {}))["projects"] as unknown[], []);
        ok(await call2("fred_project_create", { project_name: "gamma" }));
        // The next request (no session, the same principal) still sees it; the sessions do not.
        const theirs = ok(await call2("fred_project_list", {}))["projects"] as Record<string, unknown>[];
        assert.deepEqual(theirs.map((p) => p["name"]), ["gamma"]);
        for (const c of [a.client, b.client]) {
          const names = (ok(await call(c, "fred_project_list", {}))["projects"] as Record<string, unknown>[])
            .map((p) => p["name"]);
          assert.ok(!names.includes("gamma"), JSON.stringify(names));
        }
      } finally {
        await modern.close().catch(() => {});
      }
    });

    await t.step("session A can cancel its own job", async () => {
      const cancelled = ok(await call(a.client, "fred_job_cancel", { job_id: jobId }));
      assert.equal(cancelled["status"], "cancelled");
    });
  } finally {
    stuck.release();
    await a.client.close().catch(() => {});
    await b.client.close().catch(() => {});
  }
});
