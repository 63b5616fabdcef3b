// Nothing read back from Redis is trusted (docs/SECURITY.md): the real server over stdio (in process) shares a
// real redis-server in which records are forged. Broken job records are skipped and logged
// (the owner's job list stands, a broken job is "not found", never "Redis is out of reach"), and
// a forged takeover recipe that points outside the storage folder fails the job and removes
// nothing.
import assert from "node:assert/strict";
import { startInProcess } from "../harness/in_process.ts";
import { errorOf, ok } from "../harness/results.ts";
import { fredConfig, startFakeFred, syntheticObservations } from "../providers/fred/fake_fred.ts";
import { startRedis } from "./_redis_server.ts";

const PREFIX = "opendata-mcp:";

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A record as a replica writes it; `drop` leaves fields out, `extra` changes them. */
function record(id: string, extra: Record<string, unknown> = {}, drop: string[] = []): string {
  const now = Date.now();
  const r: Record<string, unknown> = {
    id,
    owner: "",
    kind: "fred_series get_observations",
    request: { series_id: "X" },
    status: "completed",
    message: "Done",
    createdAt: now - 1000,
    updatedAt: now,
    rowsFetched: 1,
    estimatedTotal: 1,
    retryCount: 0,
    ...extra,
  };
  for (const k of drop) delete r[k];
  return JSON.stringify(r);
}

Deno.test("fred over a shared Redis skips forged job records and never trusts their paths", async (t) => {
  await using redis = await startRedis();
  await using fake = startFakeFred();
  fake.route({
    path: "/fred/series/observations",
    match: (r) => r.url.searchParams.get("series_id") === "FLOW",
    reply: (r) => ({
      json: syntheticObservations(
        30_000,
        Number(r.url.searchParams.get("offset") ?? 0),
        Number(r.url.searchParams.get("limit") ?? 100_000),
      ),
    }),
  });
  await using s = await startInProcess({
    args: ["--providers", "fred"],
    configYaml: fredConfig(fake.origin),
    env: { REDIS_URL: redis.url, MCP_JOB_LEASE_TIMEOUT: "1", MCP_JOB_TAKEOVER_INTERVAL: "0.2" },
  });
  const call = async (name: string, args: Record<string, unknown>) =>
    await s.client.callTool({ name, arguments: args });
  const forge = async (id: string, value: string, score = Date.now()) => {
    await redis.command("SET", `${PREFIX}job:${id}`, value);
    await redis.command("ZADD", `${PREFIX}jobs:owner:-`, String(score), id);
  };

  const real = ok(
    await call("fred_series", { operation: "get_observations", series_id: "FLOW", output: "file" }),
  );
  const realId = String(real["job_id"] ?? "");
  assert.ok(realId, `a real job was started: ${JSON.stringify(real).slice(0, 300)}`);
  await until("the real job to finish", async () => {
    const v = ok(await call("fred_job_status", { job_id: realId }));
    return v["status"] === "completed" ? v : undefined;
  });

  await t.step("broken records are skipped: the list stands and a broken job is not found", async () => {
    await forge("fred-job-nocreated", record("fred-job-nocreated", {}, ["createdAt"]));
    await forge("fred-job-notjson", "this is not JSON {");
    await forge("fred-job-deep", `${'{"a":'.repeat(5000)}1${"}".repeat(5000)}`);
    await forge("fred-job-otherid", record("fred-job-someoneelse"));
    await forge(
      "fred-job-badstatus",
      record("fred-job-badstatus", { status: "pwned", createdAt: "yesterday" }),
    );
    const list = ok(await call("fred_job_list", {}));
    const ids = (list["jobs"] as Record<string, unknown>[]).map((j) => j["job_id"]);
    assert.deepEqual(ids, [realId], "only the real job is listed");
    for (const id of ["fred-job-nocreated", "fred-job-notjson", "fred-job-deep"]) {
      const e = errorOf(await call("fred_job_status", { job_id: id }));
      assert.equal(e["error_type"], "JOB_NOT_FOUND", `${id}: ${JSON.stringify(e)}`);
      assert.doesNotMatch(String(e["message"]), /Redis/);
    }
    const logged = await until("the log lines", () => {
      const lines = s.transport.stderr.split("\n").filter((l) => l.includes("job record in Redis skipped"));
      return Promise.resolve(lines.length >= 5 ? lines : undefined);
    });
    assert.ok(logged.some((l) => l.includes("not JSON")));
    assert.ok(logged.some((l) => l.includes("createdAt")));
  });

  await t.step("a forged takeover recipe pointing outside the storage folder removes nothing", async () => {
    const outside = `${s.home}/outside`;
    Deno.mkdirSync(outside, { recursive: true });
    const victim = `${outside}/.victim.csv.partial`;
    Deno.writeTextFileSync(victim, "someone else's half-written file");
    const id = "fred-job-forged1";
    await forge(
      id,
      record(id, {
        status: "processing",
        replica: "replica-gone",
        resume: {
          kind: "fred.paged",
          data: {
            tool: "fred_series",
            args: { operation: "get_observations", series_id: "GNPCA" },
            mode: "file",
            format: "csv",
            project: "default",
            file: "../../../../../outside/victim.csv",
          },
        },
      }),
    );
    await redis.command("ZADD", `${PREFIX}jobs:active`, String(Date.now()), id);
    const failed = await until("the takeover to fail the forged job", async () => {
      const v = ok(await call("fred_job_status", { job_id: id }));
      return v["status"] === "failed" ? v : undefined;
    });
    assert.match(JSON.stringify(failed["error"]), /path|file/i);
    assert.equal(
      Deno.readTextFileSync(victim),
      "someone else's half-written file",
      "the victim is untouched",
    );
  });
});
