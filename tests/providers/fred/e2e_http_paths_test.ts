// What an HTTP client learns of the server's disk (docs/SECURITY.md, "Paths over HTTP"): a
// finished job's status, a full storage folder's hint and a read-only server's hint name files
// relative to the data folder, never by its absolute path, and suggest only what the schema
// accepts. The real HTTP server in process, real SDK clients, a fake FRED.
import assert from "node:assert/strict";
import { startHttpInProcess } from "../../harness/in_process.ts";
import { connectHttp } from "../../harness/provider.ts";
import { errorOf, ok } from "../../harness/results.ts";
import { fredConfig, routeSyntheticSeries, startFakeFred } from "./fake_fred.ts";

type Result = Awaited<ReturnType<Awaited<ReturnType<typeof connectHttp>>["client"]["callTool"]>>;

/** Everything an answer shows: its text blocks and structured content. */
function shown(r: Result): string {
  return JSON.stringify([r.content, r.structuredContent ?? null]);
}

Deno.test("fred over HTTP: job status and storage refusals name no absolute path of the server", async () => {
  await using fake = startFakeFred();
  routeSyntheticSeries(fake, "QUICKJOB", 10_500);
  await using server = await startHttpInProcess({
    args: ["--providers", "fred"],
    configYaml: fredConfig(fake.origin, { max_projects: 2 }),
  });
  const { client } = await connectHttp(server.origin);
  try {
    const started = ok(
      await client.callTool({
        name: "fred_series",
        arguments: { operation: "get_observations", series_id: "QUICKJOB" },
      }),
    );
    const jobId = String(started["job_id"]);
    let status: Result | undefined;
    for (let i = 0; i < 20; i++) {
      status = await client.callTool({
        name: "fred_job_status",
        arguments: { job_id: jobId, wait_seconds: 10 },
      });
      if ((status.structuredContent as Record<string, unknown>)["status"] === "completed") break;
    }
    const view = ok(status!);
    assert.equal(view["status"], "completed", shown(status!));
    const result = view["result"] as Record<string, unknown>;
    assert.equal(result["file_path"], result["relative_path"]);
    assert.ok(!shown(status!).includes(server.home), shown(status!));
    assert.match(shown(status!), /Result: 10500 rows in `[^`/][^`]*`/);

    // Projects until the storage folder is full (2 in all).
    let full: Record<string, unknown> | undefined;
    for (let i = 0; i < 3 && !full; i++) {
      const r = await client.callTool({ name: "fred_project_create", arguments: { project_name: `p${i}` } });
      if (r.isError) full = errorOf(r);
    }
    // One client meets its share of the folder (1/16 of it, at least one project) before the
    // folder's own cap: either refusal must name no server path.
    assert.ok(
      ["QUOTA_EXCEEDED", "STORAGE_LIMIT"].includes(String(full?.["error_type"])),
      JSON.stringify(full),
    );
    assert.ok(!JSON.stringify(full).includes(server.home), JSON.stringify(full));
    assert.ok(!/\/(tmp|home|root|var)\//.test(JSON.stringify(full)), JSON.stringify(full));
  } finally {
    await client.close();
  }
});

Deno.test("fred over HTTP with MCP_WRITES=off: the hint suggests an output value the schema accepts", async () => {
  await using fake = startFakeFred();
  await using server = await startHttpInProcess({
    args: ["--providers", "fred"],
    configYaml: fredConfig(fake.origin),
    env: { MCP_WRITES: "off" },
  });
  const { client } = await connectHttp(server.origin);
  try {
    const refused = errorOf(
      await client.callTool({
        name: "fred_series",
        arguments: { operation: "get_observations", series_id: "GNPCA", output: "file" },
      }),
    );
    assert.equal(refused["error_type"], "CONFIGURATION_ERROR");
    const suggested = /output: "([a-z]+)"/.exec(String(refused["hint"]))?.[1];
    assert.ok(suggested, String(refused["hint"]));
    const followed = await client.callTool({
      name: "fred_series",
      arguments: { operation: "get_observations", series_id: "GNPCA", output: suggested },
    });
    assert.notEqual(followed.isError, true, shown(followed));
  } finally {
    await client.close();
  }
});
