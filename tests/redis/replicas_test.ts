// Two (then three) real server processes with one real redis-server act as one server: the
// response cache and FRED's request budget are shared, a job started on one replica is followed
// and cancelled from the other, a job whose replica is killed is taken over and finished by the
// other, and Redis stopping mid-run leaves calls working on local fallbacks.
import assert from "node:assert/strict";
import { startHttpServer } from "../harness/spawn_http.ts";
import type { HttpServerProcess } from "../harness/spawn_http.ts";
import { childEnv, entryOf, removeHome, scratchHome, startArgs } from "../harness/spawn.ts";
import { Client, StreamableHTTPClientTransport } from "../harness/sdk_client.ts";
import type { Received } from "../fakes/upstream.ts";
import { errorOf, ok } from "../harness/results.ts";
import { fredConfig, startFakeFred, syntheticObservations, TEST_KEY } from "../providers/fred/fake_fred.ts";
import { startRedis } from "./_redis_server.ts";
import type { RedisServer } from "./_redis_server.ts";
import { until as poll } from "../harness/until.ts";

/**
 * The one file under `root` whose path ends with `relative`: over HTTP a job names its file
 * relative to its project, never by the server's absolute path (docs/SECURITY.md).
 */
function onDisk(root: string, relative: string): string {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const e of Deno.readDirSync(dir)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) walk(path);
      else if (path.endsWith(`/${relative}`)) found.push(path);
    }
  };
  walk(root);
  assert.equal(found.length, 1, `one file ends with ${relative}: ${found.join(", ")}`);
  return found[0]!;
}

/** The server these tests spawn: the sources' main.ts. */
const MAIN = entryOf({});

async function connect(server: HttpServerProcess): Promise<Client> {
  const client = new Client({ name: "replicas-test", version: "0" }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
  return client;
}

const until = <T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> =>
  poll(what, probe, ms, 50);

async function health(server: HttpServerProcess): Promise<Record<string, unknown>> {
  return await (await fetch(`${server.origin}/health`)).json();
}

/** The names in a RESP array reply (enough for KEYS and the collection replies of tests). */
function bulkStrings(reply: string): string[] {
  return reply.split("\r\n").filter((_, i, all) => i > 0 && all[i - 1]!.startsWith("$"));
}

/** Every key and every value in Redis, as text, to look for what must never be stored. */
async function everything(redis: RedisServer): Promise<string> {
  const parts: string[] = [];
  for (const key of bulkStrings(await redis.command("KEYS", "*"))) {
    const type = (await redis.command("TYPE", key)).trim().replace(/^\+/, "");
    const read: Record<string, string[]> = {
      string: ["GET", key],
      hash: ["HGETALL", key],
      zset: ["ZRANGE", key, "0", "-1", "WITHSCORES"],
      set: ["SMEMBERS", key],
      list: ["LRANGE", key, "0", "-1"],
    };
    parts.push(key, read[type] ? await redis.command(...read[type]!) : `(${type})`);
  }
  return parts.join("\n");
}

const seriesIs = (id: string) => (r: Received) => r.url.searchParams.get("series_id") === id;
const offsetOf = (r: Received) => Number(r.url.searchParams.get("offset") ?? 0);
const limitOf = (r: Received) => Number(r.url.searchParams.get("limit") ?? 100_000);
const progressOf = (v: Record<string, unknown>) =>
  (v["progress"] as { rows_fetched: number } | undefined)?.rows_fetched ?? 0;

Deno.test("replicas on one Redis share the cache and FRED's jobs, and take over a killed replica's job", async (t) => {
  await using redis = await startRedis();
  await using fake = startFakeFred();
  const gates = { cancel: Promise.withResolvers<void>(), kill: Promise.withResolvers<void>() };
  for (
    const [id, rows, gate] of [["CANCELME", 50_000, gates.cancel], ["KILLME", 50_000, gates.kill]] as const
  ) {
    fake.route({
      path: "/fred/series/observations",
      match: seriesIs(id),
      reply: async (r) => {
        if (offsetOf(r) > 0) await gate.promise;
        return { json: syntheticObservations(rows, offsetOf(r), limitOf(r)) };
      },
    });
  }
  fake.route({
    path: "/fred/series/observations",
    match: seriesIs("FLOW"),
    reply: (r) => ({ json: syntheticObservations(30_000, offsetOf(r), limitOf(r)) }),
  });
  const home = scratchHome(
    fredConfig(fake.origin, { cache_ttl: 300, breaker_threshold: 100, job_retries: 1 }),
  );
  await using _home = { [Symbol.asyncDispose]: () => Promise.resolve(removeHome(home)) };
  const options = {
    args: ["--providers", "fred", "--stateless"],
    home,
    env: { REDIS_URL: redis.url, MCP_JOB_LEASE_TIMEOUT: "1.5", MCP_JOB_TAKEOVER_INTERVAL: "0.5" },
  };
  const [a, b] = await Promise.all([startHttpServer(options), startHttpServer(options)]);
  await using _a = a;
  await using _b = b;
  const ca = await connect(a);
  const cb = await connect(b);
  const call = (c: Client, name: string, args: Record<string, unknown>) =>
    c.callTool({ name, arguments: args });

  try {
    await t.step("an answer cached by one replica is served by the other", async () => {
      const before = fake.requestsTo("/fred/category").length;
      ok(await call(ca, "fred_category", { operation: "get", category_id: 125 }));
      ok(await call(cb, "fred_category", { operation: "get", category_id: 125 }));
      assert.equal(
        fake.requestsTo("/fred/category").length - before,
        1,
        "one upstream request for two calls",
      );
      ok(await call(cb, "fred_category", { operation: "get", category_id: 125, fresh: true }));
      assert.equal(
        fake.requestsTo("/fred/category").length - before,
        2,
        "fresh still bypasses the shared cache",
      );
    });

    await t.step("a citation made on one replica is read on the other, its api_key left out", async () => {
      const answer = ok(await call(ca, "fred_category", { operation: "get", category_id: 125, fresh: true }));
      const citation = String((answer["provenance"] as Record<string, unknown>)["citation"]);
      assert.match(citation, /^opendata:\/\/citation\/fred\/[0-9a-f]{20}$/);
      const read = await cb.readResource({ uri: citation });
      const doc = JSON.parse((read.contents[0] as { text: string }).text);
      assert.match(doc.request.url, /\/fred\/category\?.*api_key=\*\*\*/);
      assert.deepEqual(doc.secrets_left_out, ["api_key"]);
      assert.ok(!JSON.stringify(doc).includes(TEST_KEY));
    });

    await t.step(
      "a job started on one replica is followed, listed and cancelled from the other",
      async () => {
        const accepted = ok(
          await call(ca, "fred_series", { operation: "get_observations", series_id: "CANCELME" }),
        );
        const jobId = String(accepted["job_id"]);
        const seen = await until("progress seen from the other replica", async () => {
          const view = ok(await call(cb, "fred_job_status", { job_id: jobId }));
          return progressOf(view) > 0 ? view : undefined;
        });
        assert.equal(seen["status"], "processing");
        const listed = ok(await call(cb, "fred_job_list", {}));
        assert.ok((listed["jobs"] as { job_id: string }[]).some((j) => j.job_id === jobId));
        const cancelled = ok(await call(cb, "fred_job_cancel", { job_id: jobId }));
        assert.equal(cancelled["status"], "cancelled");
        // The worker on the first replica stopped and said so.
        const final = ok(await call(ca, "fred_job_status", { job_id: jobId }));
        assert.equal(final["status"], "cancelled");
        assert.equal(final["message"], "The job was cancelled; no file was kept");
        gates.cancel.resolve();
      },
    );

    await t.step("a job followed from the other replica completes there with its file", async () => {
      const accepted = ok(
        await call(ca, "fred_series", { operation: "get_observations", series_id: "FLOW" }),
      );
      const done = ok(
        await call(cb, "fred_job_status", { job_id: String(accepted["job_id"]), wait_seconds: 30 }),
      );
      assert.equal(done["status"], "completed");
      const result = done["result"] as { rows_written: number; relative_path: string };
      assert.equal(result.rows_written, 30_000);
      assert.ok(
        Deno.statSync(onDisk(home, result.relative_path)).size > 0,
        "the file is in the shared data folder",
      );
    });

    let killedAt = 0;
    let takenOverAt = 0;
    await t.step("a job whose replica is killed is taken over and finished by the other", async () => {
      const accepted = ok(
        await call(ca, "fred_series", { operation: "get_observations", series_id: "KILLME" }),
      );
      const jobId = String(accepted["job_id"]);
      await until("the first page written", async () => {
        const view = ok(await call(cb, "fred_job_status", { job_id: jobId }));
        return progressOf(view) > 0 ? view : undefined;
      });
      await a.stop("SIGKILL");
      killedAt = Date.now();
      gates.kill.resolve();
      await until("the takeover", async () => {
        const view = ok(await call(cb, "fred_job_status", { job_id: jobId }));
        if (String(view["message"]).startsWith("Resumed") || view["status"] === "completed") {
          takenOverAt = Date.now();
          return view;
        }
        return undefined;
      });
      const done = ok(await call(cb, "fred_job_status", { job_id: jobId, wait_seconds: 30 }));
      assert.equal(done["status"], "completed", JSON.stringify(done));
      const result = done["result"] as { rows_written: number; relative_path: string };
      assert.equal(result.rows_written, 50_000);
      const path = onDisk(home, result.relative_path);
      const lines = Deno.readTextFileSync(path).trimEnd().split("\r\n");
      assert.equal(lines.length, 50_001, "header and every row, none twice");
      const folder = path.slice(0, path.lastIndexOf("/"));
      const partials = [...Deno.readDirSync(folder)].filter((e) => e.name.endsWith(".partial"));
      assert.deepEqual(partials, [], "the killed replica's partial file was removed");
      await b.logged(/"msg":"job taken over from a replica that stopped".*"action":"resumed"/);
      console.log(`takeover measured: ${takenOverAt - killedAt} ms after SIGKILL (lease 1.5 s, scan 0.5 s)`);
    });

    await t.step("no key or value in Redis holds FRED's key", async () => {
      const stored = await everything(redis);
      assert.match(stored, /opendata-mcp:job:/, "job records were read");
      assert.match(stored, /"series_id":"KILLME"/, "the values were read, not only the keys");
      assert.ok(!stored.includes(TEST_KEY), "FRED's key is stored nowhere in Redis");
    });
  } finally {
    await ca.close().catch(() => {});
    await cb.close().catch(() => {});
  }
});

Deno.test("replicas on one Redis keep one FRED budget and keep serving when Redis stops", async (t) => {
  await using redis = await startRedis();
  await using fake = startFakeFred();
  const home = scratchHome(
    fredConfig(fake.origin, { rate_limit_per_minute: 6, cache_ttl: 0, breaker_threshold: 100 }),
  );
  await using _home = { [Symbol.asyncDispose]: () => Promise.resolve(removeHome(home)) };
  const options = {
    args: ["--providers", "fred", "--stateless"],
    home,
    env: { REDIS_URL: redis.url, REDIS_PREFIX: "budget-test:", REDIS_TIMEOUT: "0.5", REDIS_RETRY_MAX: "0.2" },
  };
  const [d, e] = await Promise.all([startHttpServer(options), startHttpServer(options)]);
  await using _d = d;
  await using _e = e;
  const cd = await connect(d);
  const ce = await connect(e);
  const get = (c: Client) =>
    c.callTool({ name: "fred_category", arguments: { operation: "get", category_id: 125 } });
  try {
    await t.step(
      "12 calls over two replicas send 6 requests upstream: the per-minute budget is shared",
      async () => {
        const outcomes: string[] = [];
        for (let i = 0; i < 12; i++) {
          const r = await get(i % 2 === 0 ? cd : ce);
          outcomes.push(r.isError ? String(errorOf(r)["error_type"]) : "ok");
        }
        assert.equal(fake.requestsTo("/fred/category").length, 6);
        assert.equal(outcomes.filter((o) => o === "ok").length, 6);
        assert.equal(outcomes.filter((o) => o === "RATE_LIMIT_EXCEEDED").length, 6, outcomes.join(","));
        const keys = await redis.command("KEYS", "*");
        assert.match(keys, /budget-test:rate:fred /, "the window lives under the configured prefix");
        assert.doesNotMatch(keys, /0123456789abcdef/, "FRED's key is nowhere in Redis");
      },
    );

    await t.step(
      "with Redis stopped, calls keep working on each replica's own budget, with one warning",
      async () => {
        await redis.stop();
        const before = fake.requestsTo("/fred/category").length;
        for (const client of [cd, ce, cd, ce]) ok(await get(client));
        assert.equal(fake.requestsTo("/fred/category").length - before, 4);
        for (const server of [d, e]) {
          const h = await health(server);
          assert.equal((h["shared_state"] as { reachable: boolean }).reachable, false);
          await server.logged(/"msg":"Redis is out of reach/);
        }
      },
    );

    await t.step("once Redis is back the replicas reconnect by themselves", async () => {
      await redis.restart();
      for (const server of [d, e]) {
        await until("reconnection", async () => {
          const state = (await health(server))["shared_state"] as { reachable: boolean };
          return state.reachable ? true : undefined;
        });
        await server.logged(/"msg":"Redis is reachable again: shared state resumes"/);
        // Lines go out in the order they were logged: every warning of the outage is in by now.
        const warnings = server.stderr().split("\n").filter((l) =>
          l.includes('"msg":"Redis is out of reach')
        );
        assert.equal(warnings.length, 1, `one warning for the whole outage:\n${warnings.join("\n")}`);
      }
      ok(await get(cd));
      assert.match(await redis.command("KEYS", "*"), /budget-test:rate:fred /, "the budget is shared again");
    });
  } finally {
    await cd.close().catch(() => {});
    await ce.close().catch(() => {});
  }
});

Deno.test("serve exits 2 naming REDIS_URL when Redis cannot be reached at start", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const home = scratchHome();
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...startArgs(home),
        MAIN,
        "serve",
        "--transport",
        "http",
        "--port",
        "0",
        "--providers",
        "example",
      ],
      env: childEnv(home, { REDIS_URL: `redis://127.0.0.1:${port}` }),
      clearEnv: true,
      cwd: home,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 2, text);
    assert.match(text, /configuration error at "server\.redis_url": Cannot reach Redis at REDIS_URL/);
    assert.match(text, /unset it to keep all state in this process/);
    assert.doesNotMatch(text, /serving MCP over HTTP/);
  } finally {
    removeHome(home);
  }
});

Deno.test("replicas on one Redis share the per-IP HTTP limit and keep their own while Redis is down", async () => {
  await using redis = await startRedis();
  const options = {
    args: ["--providers", "example", "--stateless"],
    env: {
      REDIS_URL: redis.url,
      RATE_LIMIT_ENABLED: "true",
      RATE_LIMIT_PER_MINUTE: "4",
      REDIS_TIMEOUT: "0.5",
      REDIS_RETRY_MAX: "0.2",
    },
  };
  const [d, e] = await Promise.all([startHttpServer(options), startHttpServer(options)]);
  await using _d = d;
  await using _e = e;
  const get = async (server: HttpServerProcess): Promise<number> => {
    const response = await fetch(`${server.origin}/`);
    await response.body?.cancel();
    if (response.status === 429) assert.match(response.headers.get("Retry-After") ?? "", /^[1-9]\d*$/);
    return response.status;
  };
  // Eight requests from one address, alternating replicas: 4 per minute in all, not 4 per replica.
  const shared: number[] = [];
  for (let i = 0; i < 8; i++) shared.push(await get(i % 2 === 0 ? d : e));
  assert.deepEqual(shared, [200, 200, 200, 200, 429, 429, 429, 429]);
  const keys = await redis.command("KEYS", "*");
  assert.match(keys, /opendata-mcp:ip:[0-9a-f]{32}/, "one bucket per client, under the prefix");
  assert.doesNotMatch(keys, /127\.0\.0\.1/, "the client address is hashed");
  // Redis gone: each replica's own buckets take over and still keep 4 per minute each.
  await redis.stop();
  const local: number[] = [];
  for (let i = 0; i < 5; i++) local.push(await get(d));
  assert.deepEqual(local, [200, 200, 200, 200, 429]);
  assert.equal(await get(e), 200, "the other replica's own bucket is its own");
});
