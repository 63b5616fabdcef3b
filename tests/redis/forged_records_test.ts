// Nothing read back from Redis is trusted (docs/SECURITY.md): the real server over stdio (in process) shares a
// real redis-server in which records are forged. Broken job records are skipped and logged
// (the owner's job list stands, a broken job is "not found", never "Redis is out of reach"), and
// a forged takeover recipe (outside the storage folder, or well-formed but of a stdio job, which
// no other process resumes) fails the job, runs nothing and removes nothing. Forged citations are
// refused with a clear message, and what a replay command shows is always quoted.
import assert from "node:assert/strict";
import { startInProcess } from "../harness/in_process.ts";
import { errorOf, ok } from "../harness/results.ts";
import { fredConfig, startFakeFred, syntheticObservations } from "../providers/fred/fake_fred.ts";
import { digest } from "../../lib/redis/http_stores.ts";
import { startRedis } from "./_redis_server.ts";
import { until as poll } from "../harness/until.ts";

const PREFIX = "opendata-mcp:";

const until = <T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> =>
  poll(what, probe, ms, 50);

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
  /** A running job whose replica is gone, with a FRED recipe, and what its takeover made of it. */
  const forgeTakeover = async (id: string, seriesId: string, project: string, file: string) => {
    await forge(
      id,
      record(id, {
        status: "processing",
        replica: "replica-gone",
        resume: {
          kind: "fred.paged",
          data: {
            tool: "fred_series",
            args: { operation: "get_observations", series_id: seriesId },
            mode: "file",
            format: "csv",
            project,
            file,
          },
        },
      }),
    );
    await redis.command("ZADD", `${PREFIX}jobs:active`, String(Date.now()), id);
    return await until(`the takeover to fail ${id}`, async () => {
      const v = ok(await call("fred_job_status", { job_id: id }));
      return v["status"] === "failed" ? v : undefined;
    });
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
    const failed = await forgeTakeover(
      "fred-job-forged1",
      "GNPCA",
      "default",
      "../../../../../outside/victim.csv",
    );
    assert.match(JSON.stringify(failed["error"]), /not resumed/i);
    assert.equal(
      Deno.readTextFileSync(victim),
      "someone else's half-written file",
      "the victim is untouched",
    );
  });

  await t.step(
    "a well-formed forged recipe of a stdio job is not run: nothing fetched or written",
    async () => {
      const asked = () => fake.requests.filter((r) => r.url.href.includes("FORGED")).length;
      const failed = await forgeTakeover("fred-job-forged2", "FORGED", "planted", "series/planted.csv");
      assert.match(JSON.stringify(failed["error"]), /started over stdio/);
      assert.equal(asked(), 0, "FRED was never asked for the forged series");
      const projects = ok(await call("fred_project_list", {}));
      assert.doesNotMatch(JSON.stringify(projects), /planted/, "no project was made for it");
    },
  );

  // A citation of the real job's answer, then forged in its place in the shared cache.
  const answer = ok(await call("fred_category", { operation: "get", category_id: 125 }));
  const citation = String((answer["provenance"] as Record<string, unknown>)["citation"] ?? "");
  assert.match(citation, /^opendata:\/\/citation\/fred\/[0-9a-f]{20}$/);
  const citationKey = `${PREFIX}cache:${digest(`citation ${citation.split("/").at(-1)}`)}`;
  // The reply is one RESP bulk string: a JSON head line, then the citation's JSON.
  const value = (await redis.command("GET", citationKey)).replace(/^\$\d+\r\n/, "").replace(/\r\n$/, "");
  const genuine = JSON.parse(value.slice(value.indexOf("\n") + 1)) as Record<string, unknown>;
  assert.equal(genuine["provider"], "fred", "the genuine citation was found in Redis");
  const plant = async (body: string) => {
    const now = Date.now();
    const head = { status: 200, contentType: "application/json", storedAt: now, expiresAt: now + 60_000 };
    await redis.command("SET", citationKey, `${JSON.stringify(head)}\n${body}`);
  };
  const read = async (): Promise<string> => {
    try {
      const r = await s.client.readResource({ uri: citation });
      return String((r.contents[0] as { text?: string }).text ?? "");
    } catch (e) {
      return `error: ${(e as Error).message}`;
    }
  };

  await t.step("a forged citation with shell code in its method is refused", async () => {
    await plant(JSON.stringify({ ...genuine, method: "GET -o /tmp/x $(touch /tmp/pwned)" }));
    const got = await read();
    assert.match(got, /^error: .*The stored citation was refused: its field "method" is not valid/);
    assert.doesNotMatch(got, /touch/);
  });

  await t.step(
    "a forged citation's URL is refused off the provider's hosts, and quoted on them",
    async () => {
      await plant(JSON.stringify({ ...genuine, url: "https://evil.example/x" }));
      assert.match(await read(), /refused: its field "url" names a host provider "fred" does not use/);
      await plant(JSON.stringify({ ...genuine, url: "file:///etc/passwd" }));
      assert.match(await read(), /refused: its field "url" is not http\(s\)/);
      const url = `${new URL(String(genuine["url"])).origin}/fred/category?q=x'$(touch /tmp/pwned)'`;
      await plant(JSON.stringify({ ...genuine, url }));
      const doc = JSON.parse(await read()) as { replay: string };
      // The URL is the last word, single-quoted, each of its ' closed, escaped and reopened.
      const quoted = `'${url.replaceAll("'", `'\\''`)}'`;
      assert.ok(doc.replay.endsWith(` ${quoted}`), doc.replay);
      assert.ok(quoted.includes(`x'\\''$(touch`), quoted);
    },
  );

  await t.step("non-JSON and mistyped citations get a clear error, no JavaScript message", async () => {
    for (
      const [body, field] of [
        ["not JSON at all {", /it is not JSON/],
        [JSON.stringify({ ...genuine, secrets: "api_key" }), /its field "secrets" is not valid/],
        [JSON.stringify({ ...genuine, sha256: 42 }), /its field "sha256" is not valid/],
        ["null", /its field "record" is not valid/],
      ] as const
    ) {
      await plant(body);
      const got = await read();
      assert.match(got, field, got);
      assert.doesNotMatch(got, /is not a function|Cannot read|undefined|-32603/, got);
    }
  });
});
