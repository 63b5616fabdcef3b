// Part of `deno task hostile` (docs/SECURITY.md): a hostile upstream and forged Redis records against a real
// stateful HTTP server sharing a real redis-server, each attack with a victim. While an attacker's call makes
// the server read a hostile body (deep nesting, long unspaced text, a huge title), a victim on another
// session polls /health and calls example-ping: the report gives the attacker's answer and the victim's worst
// and median latency. Forged job records go into the victim's own job index in Redis: the report says what
// the victim's job list, status and the takeover of a forged recipe did. Traffic stays on 127.0.0.1; every
// phase is bounded.
import { startHttpServer } from "../../tests/harness/spawn_http.ts";
import type { HttpServerProcess } from "../../tests/harness/spawn_http.ts";
import { removeHome, scratchHome } from "../../tests/harness/spawn.ts";
import { Client, StreamableHTTPClientTransport } from "../../tests/harness/sdk_client.ts";
import { fixtureText } from "../../tests/fakes/upstream.ts";
import { pct, withVictim } from "../../tests/harness/victim.ts";
import type { Received } from "../../tests/fakes/upstream.ts";
import { serveOgcCatalog } from "../../tests/fakes/hostile_bodies.ts";
import { fredConfig, startFakeFred, syntheticObservations } from "../../tests/providers/fred/fake_fred.ts";
import { startRedis } from "../../tests/redis/_redis_server.ts";
import type { RedisServer } from "../../tests/redis/_redis_server.ts";

const PREFIX = "opendata-mcp:";

type Result = Awaited<ReturnType<Client["callTool"]>>;

/** One attack's hostile body, served by the fake upstream for an id of its own. */
interface BodyAttack {
  label: string;
  id: string;
  path: "/fred/series" | "/fred/series/observations" | "ogc" | "snl";
  body: () => string;
}

const DS = "LokaliteterEnkeltminnerOgSikringssoner";
const OGC_ITEMS = `/${DS}/collections/lokaliteter/items`;

/** A GeoJSON feature whose properties hold `nested` (text of a JSON value). */
const ogcFeature = (id: string, nested: string) =>
  `{"type":"Feature","id":"${id}","geometry":{"type":"Point","coordinates":[10.76,59.9]},` +
  `"properties":{"kulturminneId":"${id}","navn":"Hostile","kommune":"0301","extra":${nested}}}`;

/** The recorded SNL article with its body replaced. */
const snlArticle = (body: string) =>
  JSON.stringify({
    ...JSON.parse(fixtureText("snl/article_fortolket_programmeringsspraak.json")),
    xhtml_body: body,
  });

const BODY_ATTACKS: BodyAttack[] = [
  {
    label: "a GeoJSON feature with arrays nested 100,000 deep in its properties",
    id: "900001",
    path: "ogc",
    body: () => ogcFeature("900001", `${"[".repeat(100_000)}${"]".repeat(100_000)}`),
  },
  {
    label: "a GeoJSON feature with an object nested 20,000 deep in its properties",
    id: "900002",
    path: "ogc",
    body: () => ogcFeature("900002", `${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}`),
  },
  {
    label: "arrays nested 100,000 deep",
    id: "DEEPARRAYS",
    path: "/fred/series/observations",
    body: () => `{"observations":${"[".repeat(100_000)}${"]".repeat(100_000)}}`,
  },
  {
    label: "an object nested 20,000 deep",
    id: "DEEPOBJECT",
    path: "/fred/series",
    body: () => `${'{"seriess":'.repeat(20_000)}1${"}".repeat(20_000)}`,
  },
  {
    label: "a 100 KB series title without spaces",
    id: "LONGTITLE",
    path: "/fred/series",
    body: () => JSON.stringify({ seriess: [{ id: "LONGTITLE", title: "x".repeat(100_000) }] }),
  },
  {
    label: "an SNL article body of 200,000 '<' without a '>'",
    id: "hostile_lt",
    path: "snl",
    body: () => snlArticle("<".repeat(200_000)),
  },
  {
    label: "an SNL article body of 70,000 unclosed '<a '",
    id: "hostile_a",
    path: "snl",
    body: () => snlArticle("<a ".repeat(70_000)),
  },
  {
    label: "a title of 200,000 '[' (one run of punctuation)",
    id: "BRACKETS",
    path: "/fred/series",
    body: () => JSON.stringify({ seriess: [{ id: "BRACKETS", title: "[".repeat(200_000) }] }),
  },
];

/** A client on a session of its own. */
export async function connect(server: HttpServerProcess): Promise<Client> {
  const client = new Client({ name: "hostile-upstream", version: "0" }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
  return client;
}

/** What a tool result says in a few words: ok, or its error type and the start of its message. */
export function outcome(r: Result): string {
  const text = (r.content as { type: string; text?: string }[]).filter((c) => c.type === "text");
  if (!r.isError) return "ok";
  // The error contract's payload travels in _meta; the one text block says it in words.
  const e = (r._meta as Record<string, unknown> | undefined)?.["opendata-mcp/error"] as
    | Record<string, unknown>
    | undefined;
  return e
    ? `${e["error_type"]} ("${String(e["message"]).slice(0, 70)}…")`
    : `error ("${(text[0]?.text ?? "").slice(0, 70)}…")`;
}

/** Options for {@linkcode upstreamAttacks}. */
export interface UpstreamAttackOptions {
  /** Calls per hostile body (default 10), so the victim's probes overlap the attack. */
  calls?: number;
  /** Another copy of main.ts to attack (e.g. an older commit, for a before/after pair). */
  main?: string;
}

/** Runs the hostile-upstream and forged-record attacks; one report line per attack. */
export async function upstreamAttacks(options: UpstreamAttackOptions = {}): Promise<string[]> {
  const calls = options.calls ?? 10;
  await using redis = await startRedis();
  await using fake = startFakeFred();
  for (const a of BODY_ATTACKS) {
    const text = a.body();
    if (a.path === "snl") {
      fake.route({ path: `/${a.id}.json`, reply: { body: text, contentType: "application/json" } });
      continue;
    }
    if (a.path === "ogc") {
      fake.route({
        path: `${OGC_ITEMS}/${a.id}`,
        reply: { body: text, contentType: "application/geo+json" },
      });
      continue;
    }
    fake.route({
      path: a.path,
      match: (r: Received) => r.url.searchParams.get("series_id") === a.id,
      reply: { body: text, contentType: "application/json" },
    });
  }
  serveOgcCatalog(fake);
  fake.route({
    path: "/fred/series/observations",
    match: (r) => r.url.searchParams.get("series_id") === "FLOW",
    reply: (r) => ({
      json: syntheticObservations(
        20_000,
        Number(r.url.searchParams.get("offset") ?? 0),
        Number(r.url.searchParams.get("limit") ?? 100_000),
      ),
    }),
  });
  const home = scratchHome(
    `${fredConfig(fake.origin)}\n  riksantikvaren_ogc:\n    base_url: ${fake.origin}\n    max_retries: 0\n` +
      "    cache_ttl: 0\n  snl:\n    base_url: " + fake.origin + "\n    max_retries: 0\n    cache_ttl: 0\n",
  );
  await using _home = { [Symbol.asyncDispose]: () => Promise.resolve(removeHome(home)) };
  await using server = await startHttpServer({
    args: ["--providers", "fred,example,riksantikvaren_ogc,snl"],
    home,
    ...(options.main ? { main: options.main } : {}),
    env: { REDIS_URL: redis.url, MCP_JOB_LEASE_TIMEOUT: "1", MCP_JOB_TAKEOVER_INTERVAL: "0.2" },
  });
  const attacker = await connect(server);
  const victim = await connect(server);
  const lines: string[] = [];
  try {
    // The victim's baseline: /health and a call with nobody attacking.
    const idle = await withVictim(server.origin, victim, async () => {
      await new Promise((r) => setTimeout(r, 1000));
      return "idle";
    });
    lines.push(
      `baseline (no attack, 1 s): victim /health p50 ${pct(idle.health, 0.5).toFixed(1)} ms, max ${
        Math.max(...idle.health).toFixed(1)
      } ms; example-ping p50 ${pct(idle.ping, 0.5).toFixed(1)} ms`,
    );
    for (const a of BODY_ATTACKS) {
      const operation = a.path === "/fred/series" ? "get" : "get_observations";
      const request = a.path === "snl"
        ? { name: "snl-article", arguments: { slug: a.id } }
        : a.path === "ogc"
        ? {
          name: "riksantikvaren-feature",
          arguments: { collection: "lokaliteter", id: a.id, response_format: "json" },
        }
        : { name: "fred_series", arguments: { operation, series_id: a.id, fresh: true } };
      const seen = await withVictim(server.origin, victim, async () => {
        let last = "";
        for (let i = 0; i < calls; i++) {
          try {
            last = outcome(await attacker.callTool(request, undefined, { timeout: 120_000 }));
          } catch (e) {
            last = `a JSON-RPC error (${(e as Error).message.slice(0, 70)})`;
          }
        }
        return last;
      });
      lines.push(
        `hostile upstream, ${a.label}: the attacker got ${seen.attacker} in ` +
          `${(seen.attackMs / calls).toFixed(0)} ms a call (${calls} calls); the victim's /health p50 ${
            pct(seen.health, 0.5).toFixed(1)
          } ms, max ${Math.max(...seen.health).toFixed(1)} ms over ${seen.health.length} probes; ` +
          `example-ping max ${Math.max(...seen.ping).toFixed(1)} ms`,
      );
    }
    lines.push(...await forgedRecords(redis, victim, home));
  } finally {
    await attacker.close().catch(() => {});
    await victim.close().catch(() => {});
  }
  return lines;
}

/** Forged records in the victim's job index; what the victim's list, status and files saw. */
async function forgedRecords(redis: RedisServer, victim: Client, home: string): Promise<string[]> {
  const call = async (name: string, args: Record<string, unknown>) =>
    await victim.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
  const started = await call("fred_series", {
    operation: "get_observations",
    series_id: "FLOW",
    output: "file",
  });
  const jobId = String((started.structuredContent as Record<string, unknown> | undefined)?.["job_id"] ?? "");
  if (!jobId) return [`forged records: no job to anchor them (${outcome(started)})`];
  for (let i = 0; i < 200; i++) {
    const v = await call("fred_job_status", { job_id: jobId });
    if ((v.structuredContent as Record<string, unknown> | undefined)?.["status"] === "completed") break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const stored = /\{.*\}/s.exec(await redis.command("GET", `${PREFIX}job:${jobId}`))?.[0] ?? "{}";
  const owner = String((JSON.parse(stored) as Record<string, unknown>)["owner"] ?? "");
  const index = `${PREFIX}jobs:owner:${owner === "" ? "-" : owner}`;
  const now = Date.now();
  const record = (id: string, extra: Record<string, unknown> = {}, drop: string[] = []) => {
    const r: Record<string, unknown> = {
      id,
      owner,
      kind: "fred_series get_observations",
      request: {},
      status: "completed",
      message: "Done",
      createdAt: now,
      updatedAt: now,
      rowsFetched: 1,
      estimatedTotal: 1,
      retryCount: 0,
      ...extra,
    };
    for (const k of drop) delete r[k];
    return JSON.stringify(r);
  };
  const forged: [string, string][] = [
    ["fred-job-nocreated", record("fred-job-nocreated", {}, ["createdAt"])],
    ["fred-job-notjson", "not JSON {"],
    ["fred-job-deep", `${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}`],
    ["fred-job-wrongid", record("fred-job-someone-else")],
  ];
  for (const [id, value] of forged) {
    await redis.command("SET", `${PREFIX}job:${id}`, value);
    await redis.command("ZADD", index, String(now + 1000), id);
  }
  const list = await call("fred_job_list", {});
  const listed =
    ((list.structuredContent as Record<string, unknown> | undefined)?.["jobs"] as unknown[] | undefined)
      ?.length;
  const statuses = await Promise.all(
    forged.map(async ([id]) => outcome(await call("fred_job_status", { job_id: id }))),
  );
  // A takeover recipe pointing outside the storage folder, at another program's half-written file.
  const outside = `${home}/outside`;
  Deno.mkdirSync(outside, { recursive: true });
  const target = `${outside}/.victim.csv.partial`;
  Deno.writeTextFileSync(target, "not the server's");
  const takeover = "fred-job-forgedrecipe";
  await redis.command(
    "SET",
    `${PREFIX}job:${takeover}`,
    record(takeover, {
      status: "processing",
      resume: {
        kind: "fred.paged",
        data: {
          tool: "fred_series",
          args: { operation: "get_observations", series_id: "FLOW" },
          mode: "file",
          format: "csv",
          project: "default",
          // From {root}/_owners/{hash}/default up to the scratch HOME.
          file: "../../../../../../../outside/victim.csv",
        },
      },
    }),
  );
  await redis.command("ZADD", index, String(now), takeover);
  await redis.command("ZADD", `${PREFIX}jobs:active`, String(now), takeover);
  let final = "not taken over within 10 s";
  for (let i = 0; i < 200; i++) {
    const v = await call("fred_job_status", { job_id: takeover });
    const s = v.structuredContent as Record<string, unknown> | undefined;
    if (s?.["status"] === "failed" || s?.["status"] === "completed") {
      final = `${s["status"]} (${JSON.stringify(s["error"] ?? {}).slice(0, 90)})`;
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  let kept = false;
  try {
    kept = Deno.readTextFileSync(target) === "not the server's";
  } catch {
    kept = false;
  }
  const written = (() => {
    try {
      return Deno.statSync(`${outside}/victim.csv`).isFile;
    } catch {
      return false;
    }
  })();
  return [
    `forged Redis records: 4 broken records in the victim's job index (no createdAt, not JSON, nested ` +
    `20,000 deep, another job's id): fred_job_list ${
      list.isError ? `failed: ${outcome(list)}` : `listed ${listed} job(s)`
    } ` +
    `(the victim's real one), fred_job_status of each: ${statuses.join("; ")}`,
    `forged takeover recipe pointing outside the storage folder: the job ended ${final}; the .partial file ` +
    `there was ${kept ? "left untouched" : "REMOVED"}, and ${
      written
        ? "a file WAS WRITTEN outside the storage folder"
        : "nothing was written outside the storage folder"
    }`,
  ];
}

/** The report block of {@linkcode upstreamAttacks}'s lines, with the run's machine. */
export function upstreamReport(lines: readonly string[]): string {
  return [
    `Run ${
      new Date().toISOString().slice(0, 10)
    } with Deno ${Deno.version.deno} on ${Deno.build.os}/${Deno.build.arch}, ` +
    `${navigator.hardwareConcurrency} cores shared with other work: a stateful HTTP server (fred, riksantikvaren_ogc, snl and example) with a ` +
    "real redis-server and a fake upstream on 127.0.0.1; the attacker and the victim on separate sessions.",
    "",
    ...lines.map((l) => `- ${l}`),
  ].join("\n");
}
