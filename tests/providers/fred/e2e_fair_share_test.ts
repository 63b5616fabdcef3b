// The per-client quota of what outlives a call, through real SDK clients over the real HTTP
// server: one client (an address, told by X-Forwarded-For behind a trusted proxy) that uses up
// its quota of projects, running jobs or stored bytes is refused with QUOTA_EXCEEDED; another client's
// session, job and files are untouched and it still gets its own quota.
import assert from "node:assert/strict";
import { startHttpServer } from "../../harness/spawn_http.ts";
import { removeHome, scratchHome } from "../../harness/spawn.ts";
import { Client } from "../../harness/sdk_client.ts";
import { connectHttp } from "../../harness/provider.ts";
import type { Received } from "../../fakes/upstream.ts";
import { errorOf, ok } from "../../harness/results.ts";
import { fredConfig, routeStuckSeries, startFakeFred, syntheticObservations } from "./fake_fred.ts";

Deno.test("fred per-client quota: projects, running jobs and stored bytes stop one client, never another", async (t) => {
  await using fake = startFakeFred();
  // STUCK: 500,000 rows whose second page waits until the test ends, so its job keeps running.
  const stuck = routeStuckSeries(fake, 500_000);
  // BIG: 60,000 rows, written by the call itself (under the job threshold), about 1.5 MB as CSV.
  fake.route({
    path: "/fred/series/observations",
    match: (r: Received) => r.url.searchParams.get("series_id") === "BIG",
    reply: (r: Received) => ({
      json: syntheticObservations(
        60_000,
        Number(r.url.searchParams.get("offset") ?? 0),
        Number(r.url.searchParams.get("limit")),
      ),
    }),
  });
  const home = scratchHome(fredConfig(fake.origin));
  await using _home = { [Symbol.asyncDispose]: () => Promise.resolve(removeHome(home)) };
  await using server = await startHttpServer({
    args: ["--providers", "fred"],
    home,
    env: {
      MCP_TRUST_PROXY: "true",
      MCP_QUOTA_PROJECTS: "3",
      MCP_QUOTA_JOBS: "1",
      MCP_QUOTA_MB: "1",
      // BIG (60,000 rows) is then written by the call itself; STUCK (500,000) still by a job.
      FRED_JOB_ROW_THRESHOLD: "100000",
    },
  });
  const clients: Client[] = [];
  const connect = async (address: string): Promise<Client> => {
    const { client } = await connectHttp(server.origin, { "X-Forwarded-For": address });
    clients.push(client);
    return client;
  };
  const call = (c: Client, name: string, args: Record<string, unknown>) =>
    c.callTool({ name, arguments: args });
  // Two sessions of the hog (one address), one of the victim.
  const hog = await connect("203.0.113.10");
  const hog2 = await connect("203.0.113.10");
  const victim = await connect("198.51.100.20");
  try {
    let victimJob = "";
    await t.step("the victim's running job and project exist before the hog starts", async () => {
      victimJob = String(
        ok(
          await call(victim, "fred_series", { operation: "get_observations", series_id: "STUCK" }),
        )["job_id"],
      );
      ok(await call(victim, "fred_project_create", { project_name: "mine" }));
    });

    await t.step(
      "projects: the hog's sessions share one quota; its newcomer gets QUOTA_EXCEEDED",
      async () => {
        ok(await call(hog, "fred_project_create", { project_name: "h1" }));
        ok(await call(hog2, "fred_project_create", { project_name: "h2" }));
        ok(await call(hog, "fred_project_create", { project_name: "h3" }));
        const e = errorOf(await call(hog2, "fred_project_create", { project_name: "h4" }));
        assert.equal(e["error_type"], "QUOTA_EXCEEDED");
        assert.equal(
          e["message"],
          "Your quota on this server is full: your client keeps 3 projects, the most one client may (3); no new project was created",
        );
        assert.match(String(e["hint"]), /Save into one of your existing projects/);
        assert.match(String(e["hint"]), /MCP_QUOTA_PROJECTS/);
        ok(await call(victim, "fred_project_create", { project_name: "mine2" }));
      },
    );

    await t.step("stored bytes: the hog's write past its quota fails; the victim still writes", async () => {
      const e = errorOf(
        await call(hog, "fred_series", {
          operation: "get_observations",
          series_id: "BIG",
          output: "file",
          project: "h1",
        }),
      );
      assert.equal(e["error_type"], "QUOTA_EXCEEDED");
      assert.match(
        String(e["message"]),
        /^Your quota on this server is full: your client's files take [\d.]+ MiB of the 1 MiB/,
        JSON.stringify(e),
      );
      const written = ok(
        await call(victim, "fred_series", {
          operation: "get_observations",
          series_id: "GNPCA",
          output: "file",
          project: "mine",
        }),
      );
      assert.ok(
        written["file"] ?? written["resource_uri"] ?? written["link"],
        JSON.stringify(written).slice(0, 300),
      );
      const files = ok(await call(victim, "fred_project_files", { project_name: "mine" }));
      assert.equal(files["total_files"], 1, "the victim's file is there");
    });
    await t.step(
      "running jobs: the hog's second job is refused with QUOTA_EXCEEDED; the victim's runs on",
      async () => {
        ok(
          await call(hog, "fred_series", {
            operation: "get_observations",
            series_id: "STUCK",
            project: "h1",
          }),
        );
        const e = errorOf(
          await call(hog2, "fred_series", {
            operation: "get_observations",
            series_id: "STUCK",
            project: "h2",
          }),
        );
        assert.equal(e["error_type"], "QUOTA_EXCEEDED");
        assert.equal(e["retryable"], true, "a running job ends on its own");
        assert.match(
          String(e["message"]),
          /your client runs 1 background jobs, the most one client may run at once \(1\)/,
        );
        assert.match(String(e["hint"]), /cancel one you no longer need/);
        const status = ok(await call(victim, "fred_job_status", { job_id: victimJob }));
        assert.ok(["accepted", "processing"].includes(String(status["status"])));
      },
    );
  } finally {
    stuck.release();
    for (const c of clients) await c.close().catch(() => {});
  }
});
