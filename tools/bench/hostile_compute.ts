// Part of `deno task hostile` (docs/SECURITY.md, "Work budgets"): upstream bodies that cost
// work in proportion to their size once read (a 600,000-vertex polygon, a 13 MB body that is only
// JSON to decode, about 4 MB of hostile markup in an SNL article, a FRED title of 7.5 million
// characters), against a real stateful HTTP server. While the attacker's call runs, a victim on another session polls /health and
// calls example-ping: the report gives the call's time and outcome and the victim's worst
// latency. Traffic stays on 127.0.0.1; every phase is bounded.
import { startHttpServer } from "../../tests/harness/spawn_http.ts";
import { removeHome, scratchHome } from "../../tests/harness/spawn.ts";
import type { Received } from "../../tests/fakes/upstream.ts";
import {
  bulkyFeature,
  fredSeriesWithTitle,
  HOSTILE_MARKUP,
  OGC_DATASET as DS,
  serveOgcCatalog,
  snlArticleWith,
  spikyPolygonFeature,
} from "../../tests/fakes/hostile_bodies.ts";
import { fredConfig, startFakeFred } from "../../tests/providers/fred/fake_fred.ts";
import { connect, outcome } from "./hostile_upstream.ts";
import { pct, withVictim } from "../../tests/harness/victim.ts";

/** One attack: what the fake serves and the call that makes the server read it. */
interface ComputeAttack {
  label: string;
  route: { path: string; match?: (r: Received) => boolean; body: string; contentType: string };
  request: { name: string; arguments: Record<string, unknown> };
}

function attacks(): ComputeAttack[] {
  const geo = "application/geo+json";
  const json = "application/json";
  const title = "ab ".repeat(2_500_000);
  const fredRoute = (id: string) => ({
    path: "/fred/series",
    match: (r: Received) => r.url.searchParams.get("series_id") === id,
    body: fredSeriesWithTitle(id, title),
    contentType: json,
  });
  return [
    {
      label: "a Polygon of 600,000 vertices (13 MB) in riksantikvaren-feature",
      route: {
        path: `/${DS}/collections/lokaliteter/items/910001`,
        body: spikyPolygonFeature("910001", 600_000),
        contentType: geo,
      },
      request: { name: "riksantikvaren-feature", arguments: { collection: "lokaliteter", id: "910001" } },
    },
    {
      label:
        "a Feature of 13 MB (1.7 million small arrays in a member nobody reads) in riksantikvaren-feature",
      route: {
        path: `/${DS}/collections/lokaliteter/items/910002`,
        body: bulkyFeature("910002", 1_700_000),
        contentType: geo,
      },
      request: { name: "riksantikvaren-feature", arguments: { collection: "lokaliteter", id: "910002" } },
    },
    ...Object.entries(HOSTILE_MARKUP).map(([label, body], i) => ({
      label: `an SNL article body of ${label}`,
      route: { path: `/hostile_markup_${i}.json`, body: snlArticleWith(body()), contentType: json },
      request: { name: "snl-article", arguments: { slug: `hostile_markup_${i}` } },
    })),
    {
      label: "an SNL article body of 600,000 unclosed '<a ' and a link (1.8 MB, under the bound)",
      route: {
        path: "/hostile_under.json",
        body: snlArticleWith(`<p>${"<a ".repeat(600_000)}</p><p><a href="https://snl.no/x">x</a></p>`),
        contentType: json,
      },
      request: { name: "snl-article", arguments: { slug: "hostile_under" } },
    },
    {
      label: "a FRED series title and notes of 'ab ' x 2.5 million",
      route: fredRoute("ABTITLE"),
      request: { name: "fred_series", arguments: { operation: "get", series_id: "ABTITLE", fresh: true } },
    },
    {
      label: "the same FRED series to a file",
      route: fredRoute("ABFILE"),
      request: {
        name: "fred_series",
        arguments: { operation: "get", series_id: "ABFILE", fresh: true, output: "file" },
      },
    },
  ];
}

/** Options for {@linkcode computeAttacks}. */
export interface ComputeAttackOptions {
  /** Calls per hostile body (default 2). */
  calls?: number;
  /** Another copy of main.ts to attack (e.g. an older commit, for a before/after pair). */
  main?: string;
  /** Only the attacks whose label this matches. */
  only?: RegExp;
}

/** Runs the work-budget attacks; one report line per attack. */
export async function computeAttacks(options: ComputeAttackOptions = {}): Promise<string[]> {
  const calls = options.calls ?? 2;
  await using fake = startFakeFred();
  const list = attacks().filter((a) => options.only?.test(a.label) ?? true);
  for (const { route } of list) {
    fake.route({
      path: route.path,
      ...(route.match ? { match: route.match } : {}),
      reply: { body: route.body, contentType: route.contentType },
    });
  }
  serveOgcCatalog(fake);
  const upstream = (id: string) =>
    `  ${id}:\n    base_url: ${fake.origin}\n    max_retries: 0\n    cache_ttl: 0\n`;
  const home = scratchHome(`${fredConfig(fake.origin)}${upstream("riksantikvaren_ogc")}${upstream("snl")}`);
  await using _home = { [Symbol.asyncDispose]: () => Promise.resolve(removeHome(home)) };
  await using server = await startHttpServer({
    args: ["--providers", "fred,example,riksantikvaren_ogc,snl"],
    home,
    ...(options.main ? { main: options.main } : {}),
  });
  const attacker = await connect(server);
  const victim = await connect(server);
  const lines: string[] = [];
  try {
    for (const a of list) {
      const seen = await withVictim(server.origin, victim, async () => {
        let last = "";
        for (let i = 0; i < calls; i++) {
          try {
            const r = await attacker.callTool(a.request, undefined, { timeout: 120_000 });
            const chars = (r.content as { text?: string }[]).reduce((n, c) => n + (c.text?.length ?? 0), 0);
            last = `${outcome(r)} (${chars} characters of text)`;
          } catch (e) {
            last = `a JSON-RPC error (${(e as Error).message.slice(0, 70)})`;
          }
        }
        return last;
      });
      lines.push(
        `${a.label}: ${seen.attacker} in ${(seen.attackMs / calls).toFixed(0)} ms a call (${calls} calls); ` +
          `the victim's /health p50 ${pct(seen.health, 0.5).toFixed(1)} ms, max ${
            Math.max(...seen.health).toFixed(1)
          } ms over ${seen.health.length} probes; example-ping max ${Math.max(...seen.ping).toFixed(1)} ms`,
      );
    }
  } finally {
    await attacker.close().catch(() => {});
    await victim.close().catch(() => {});
  }
  return lines;
}

/** The report block of {@linkcode computeAttacks}'s lines, with the run's machine. */
export function computeReport(lines: readonly string[]): string {
  return [
    `Run ${
      new Date().toISOString().slice(0, 10)
    } with Deno ${Deno.version.deno} on ${Deno.build.os}/${Deno.build.arch}, ` +
    `${navigator.hardwareConcurrency} cores shared with other work: a stateful HTTP server (fred, riksantikvaren_ogc, snl and ` +
    "example) and a fake upstream on 127.0.0.1; the attacker and the victim on separate sessions.",
    "",
    ...lines.map((l) => `- ${l}`),
  ].join("\n");
}

// `deno run -A tools/bench/hostile_compute.ts [pattern]`: only the attacks whose label matches.
if (import.meta.main) {
  console.log(computeReport(await computeAttacks(Deno.args[0] ? { only: new RegExp(Deno.args[0]) } : {})));
}
