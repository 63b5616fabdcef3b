// The `records` target of `deno task hostile`: the stronger variants of the quota and the forged
// Redis record attacks. Eleven addresses (X-Forwarded-For from a trusted proxy) each take all the
// projects and finished jobs they may, against the global caps, then a twelfth client and an
// earlier victim say what they still get, before and after a restart. And with a real
// redis-server shared by the server: forged citations (shell code in the method or URL, another
// host, not JSON, mistyped) and well-formed forged takeover recipes (unsigned, or a signed one
// moved to another owner), with what the reader and the victim's folder saw.
// Traffic stays on 127.0.0.1; every phase is bounded by counts.
import { startHttpServer } from "../../tests/harness/spawn_http.ts";
import { removeHome, scratchHome } from "../../tests/harness/spawn.ts";
import type { Client } from "../../tests/harness/sdk_client.ts";
import { session, tally } from "./_fair_attacks.ts";
import type { Received } from "../../tests/fakes/upstream.ts";
import { fredConfig, startFakeFred, syntheticObservations } from "../../tests/providers/fred/fake_fred.ts";
import { startRedis } from "../../tests/redis/_redis_server.ts";
import { digest } from "../../lib/redis/http_stores.ts";

const PREFIX = "opendata-mcp:";

/** The structured answer of a call, or its error type. */
async function answer(
  c: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  try {
    const r = await c.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
    const s = (r.structuredContent ?? {}) as Record<string, unknown>;
    if (r.isError !== true) return s;
    const blocks = r.content as { type: string; text?: string }[];
    return { error_type: String(JSON.parse(blocks[1]?.text ?? "{}")["error_type"] ?? "error") };
  } catch (e) {
    return { error_type: `failed (${(e as Error).message.slice(0, 60)})` };
  }
}

const outcome = (a: Record<string, unknown>) => String(a["error_type"] ?? "ok");

async function finished(c: Client, jobId: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const s = await answer(c, "fred_job_status", { job_id: jobId });
    if (s["error_type"] || ["completed", "failed", "incomplete"].includes(String(s["status"]))) {
      return String(s["status"] ?? s["error_type"]);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return "still running";
}

/** What a new client gets: a project of its own, and a file written into it. */
async function newProjectAndFile(c: Client, project: string): Promise<{ created: string; written: string }> {
  const created = outcome(await answer(c, "fred_project_create", { project_name: project }));
  const written = outcome(
    await answer(c, "fred_series", {
      operation: "get_observations",
      series_id: "TINY",
      output: "file",
      project,
    }),
  );
  return { created, written };
}

/** 11 addresses x 10 projects and x 96 finished jobs against the global caps, and a restart. */
async function manyAddresses(report: string[]): Promise<void> {
  await using fake = startFakeFred();
  fake.route({
    path: "/fred/series/observations",
    match: (r: Received) => r.url.searchParams.get("series_id") === "TINY",
    reply: (r: Received) => ({
      json: syntheticObservations(
        20,
        Number(r.url.searchParams.get("offset") ?? 0),
        Number(r.url.searchParams.get("limit") ?? 20),
      ),
    }),
  });
  const home = scratchHome(fredConfig(fake.origin));
  // Jobs of 20 rows: each finishes at once and writes a tiny file.
  const env = { MCP_TRUST_PROXY: "true", FRED_JOB_ROW_THRESHOLD: "10" };
  try {
    let victimJob = "";
    {
      await using server = await startHttpServer({ args: ["--providers", "fred"], home, env });
      const victim = await session(server.origin, "198.51.100.7");
      victimJob = String(
        (await answer(victim, "fred_series", {
          operation: "get_observations",
          series_id: "TINY",
          output: "file",
        }))["job_id"],
      );
      const victimFirst = await finished(victim, victimJob);
      const projects: string[] = [];
      const jobs: string[] = [];
      for (let a = 1; a <= 11; a++) {
        const flooder = await session(server.origin, `203.0.113.${a}`);
        for (let p = 0; p < 10; p++) {
          projects.push(outcome(await answer(flooder, "fred_project_create", { project_name: `p${p}` })));
        }
        for (let j = 0; j < 96; j++) {
          const started = await answer(flooder, "fred_series", {
            operation: "get_observations",
            series_id: "TINY",
            output: "file",
            project: "p0",
          });
          jobs.push(started["job_id"] ? "a job" : outcome(started));
          if (started["job_id"]) await finished(flooder, String(started["job_id"]));
        }
        await flooder.close().catch(() => {});
      }
      const victimAfter = outcome(await answer(victim, "fred_job_status", { job_id: victimJob }));
      const newcomer = await session(server.origin, "198.51.100.12");
      const { created, written } = await newProjectAndFile(newcomer, "mine");
      report.push(
        `11 addresses × 10 projects and × 96 finished jobs (defaults: quota 10 projects and 100 job records a client, ` +
          `FRED_MAX_PROJECTS 160, 1,000 finished jobs a replica): project creations ${
            tally(projects)
          }; job starts ${tally(jobs)}. ` +
          `The victim's earlier job (${victimFirst}) then answered ${
            victimAfter === "ok" ? "its status" : victimAfter
          }; ` +
          `a 12th client's project_create ${created}, its output "file" ${written}`,
      );
      await victim.close().catch(() => {});
      await newcomer.close().catch(() => {});
    }
    await using again = await startHttpServer({ args: ["--providers", "fred"], home, env });
    const late = await session(again.origin, "198.51.100.13");
    const { created, written } = await newProjectAndFile(late, "late");
    report.push(
      `after a restart with the 11 addresses' projects on disk: a new client's project_create ${created}, its output "file" ${written}`,
    );
    await late.close().catch(() => {});
  } finally {
    removeHome(home);
  }
}

/** Forged citations and takeover recipes in a Redis the server shares with a signing secret. */
async function forgedRecords(report: string[]): Promise<void> {
  await using redis = await startRedis();
  await using fake = startFakeFred();
  const home = scratchHome(fredConfig(fake.origin));
  try {
    await using server = await startHttpServer({
      args: ["--providers", "fred"],
      home,
      env: {
        REDIS_URL: redis.url,
        MCP_REQUEST_STATE_KEY: "hostile-records-shared-secret-0123456789",
        MCP_JOB_LEASE_TIMEOUT: "1",
        MCP_JOB_TAKEOVER_INTERVAL: "0.2",
        // GNPCA's rows to a file then make a job, whose signed recipe the attack moves.
        FRED_JOB_ROW_THRESHOLD: "10",
      },
    });
    const victim = await session(server.origin, "198.51.100.7");
    const cited = await answer(victim, "fred_category", { operation: "get", category_id: 125 });
    const uri = String((cited["provenance"] as Record<string, unknown> | undefined)?.["citation"] ?? "");
    const key = `${PREFIX}cache:${digest(`citation ${uri.split("/").at(-1)}`)}`;
    const raw = (await redis.command("GET", key)).replace(/^\$\d+\r\n/, "").replace(/\r\n$/, "");
    const genuine = JSON.parse(raw.slice(raw.indexOf("\n") + 1)) as Record<string, unknown>;
    const origin = new URL(String(genuine["url"])).origin;
    const forged: [string, string][] = [
      ["method with $(touch)", JSON.stringify({ ...genuine, method: "GET -o /tmp/x $(touch /tmp/pwned)" })],
      [
        "URL with $(touch) on FRED's host",
        JSON.stringify({ ...genuine, url: `${origin}/fred?q='$(touch /tmp/pwned)'` }),
      ],
      ["URL on another host", JSON.stringify({ ...genuine, url: "https://evil.example/" })],
      ["not JSON", "not JSON {"],
      ["secrets not a list", JSON.stringify({ ...genuine, secrets: "api_key" })],
    ];
    const seen: string[] = [];
    for (const [label, body] of forged) {
      const now = Date.now();
      await redis.command(
        "SET",
        key,
        `${
          JSON.stringify({
            status: 200,
            contentType: "application/json",
            storedAt: now,
            expiresAt: now + 60_000,
          })
        }\n${body}`,
      );
      try {
        const r = await victim.readResource({ uri });
        const replay = String(JSON.parse((r.contents[0] as { text: string }).text)["replay"] ?? "");
        seen.push(
          `${label}: served, replay ${
            replay.includes("'$(touch") || !replay.includes("$(")
              ? "with every word quoted"
              : `UNQUOTED: ${replay.slice(-60)}`
          }`,
        );
      } catch (e) {
        seen.push(
          `${label}: refused (${(e as Error).message.replace(/^MCP error -?\d+: /, "").slice(0, 70)})`,
        );
      }
    }
    report.push(`forged citations in Redis: ${seen.join("; ")}`);

    // A genuine finished job gives the owner's hash and a signed recipe to move.
    const started = await answer(victim, "fred_series", {
      operation: "get_observations",
      series_id: "GNPCA",
      output: "file",
    });
    const jobId = String(started["job_id"] ?? "");
    const stored = jobId
      ? /\{.*\}/s.exec(await redis.command("GET", `${PREFIX}job:${jobId}`))?.[0]
      : undefined;
    const record = JSON.parse(stored ?? "{}") as Record<string, unknown>;
    const owner = String(record["owner"] ?? "");
    const recipe = {
      kind: "fred.single",
      data: {
        tool: "fred_series",
        args: { operation: "get_observations", series_id: "FORGED" },
        mode: "file",
        format: "csv",
        project: "planted",
        file: "series/planted.csv",
      },
    };
    const base = {
      owner,
      kind: "fred_series get_observations",
      request: {},
      status: "processing",
      message: "x",
      replica: "gone",
      createdAt: Date.now(),
      updatedAt: Date.now(),
      rowsFetched: 0,
      estimatedTotal: null,
      retryCount: 0,
    };
    const cases: [string, Record<string, unknown>][] = [
      ["unsigned recipe for the victim's folder", {
        ...base,
        id: "fred-job-forged-unsigned",
        resume: recipe,
      }],
      ["wrong signature", {
        ...base,
        id: "fred-job-forged-wrongsig",
        resume: recipe,
        resumeSig: "0".repeat(64),
      }],
      ["a signed recipe moved to another owner", {
        ...record,
        ...base,
        id: jobId || "fred-job-none",
        owner: "0".repeat(32),
        resume: record["resume"],
      }],
    ];
    const results: string[] = [];
    for (const [label, r] of cases) {
      const id = String(r["id"]);
      await redis.command("SET", `${PREFIX}job:${id}`, JSON.stringify(r));
      await redis.command("ZADD", `${PREFIX}jobs:active`, String(Date.now()), id);
      let status = "not taken over within 10 s";
      for (let i = 0; i < 200; i++) {
        const now = JSON.parse(/\{.*\}/s.exec(await redis.command("GET", `${PREFIX}job:${id}`))?.[0] ?? "{}");
        if (now["status"] === "failed" || now["status"] === "completed") {
          status = `${now["status"]} (${String(now["error"]?.["message"] ?? "").slice(0, 90)})`;
          break;
        }
        await new Promise((res) => setTimeout(res, 50));
      }
      results.push(`${label}: ${status}`);
    }
    const asked = fake.requests.filter((r) => r.url.href.includes("FORGED")).length;
    report.push(
      `forged takeover recipes in Redis (MCP_REQUEST_STATE_KEY set): ${
        results.join("; ")
      }; FRED was asked for the forged series ${asked} time(s)`,
    );
    await victim.close().catch(() => {});
  } finally {
    removeHome(home);
  }
}

/** The `records` target: see the module comment. */
export async function recordAttacks(report: string[]): Promise<void> {
  for (
    const [name, attack] of [["many addresses", manyAddresses], ["forged records", forgedRecords]] as const
  ) {
    console.error(`hostile: records … ${name}`);
    try {
      await attack(report);
    } catch (e) {
      report.push(`${name}: the attack run failed: ${(e as Error).message.slice(0, 300)}`);
    }
  }
}
