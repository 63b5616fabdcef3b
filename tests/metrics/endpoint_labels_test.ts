// The endpoint label of the upstream series comes from a fixed set, never from what a caller
// chose (docs/SECURITY.md, "Metrics"): the real server over stdio with its metrics listener,
// against a fake api.ra.no, asked for 2,000 collections that do not exist.
import assert from "node:assert/strict";
import { declaredEndpoint } from "../../lib/http/endpoint.ts";
import { MAX_ENDPOINT_LABELS, ServerMetrics } from "../../lib/metrics/mod.ts";
import { openProvider } from "../harness/provider.ts";

const TOKEN = "metrics-token-for-label-tests-0123";

/** The distinct `endpoint` labels of the upstream request series in a scrape. */
function endpointLabels(text: string): Set<string> {
  return new Set(
    [...text.matchAll(/^opendata_upstream_requests_total\{[^}]*endpoint="([^"]*)"/gm)].map((m) => m[1]!),
  );
}

Deno.test("riksantikvaren-features with 2,000 distinct collection names adds no endpoint label to /metrics", async () => {
  await using s = await openProvider({
    provider: "riksantikvaren_ogc",
    settings: { max_retries: 0, cache_ttl: 0 },
    args: ["--providers", "riksantikvaren_ogc", "--metrics-port", "0"],
    env: { MCP_METRICS_TOKEN: TOKEN },
  });
  const line = s.stderr().split("\n").find((l) => l.includes('"msg":"serving metrics"'));
  assert.ok(line, s.stderr());
  const { url } = JSON.parse(line);
  const scrape = async (): Promise<string> => {
    const res = await fetch(url, { headers: { Authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200);
    return await res.text();
  };
  const features = (collection: string) =>
    s.client.callTool({ name: "riksantikvaren-features", arguments: { collection, limit: 1 } });
  await features("lokaliteter");
  await features("first-made-up");
  const before = await scrape();
  const labels = endpointLabels(before);
  assert.deepEqual([...labels].sort(), ["LokaliteterEnkeltminnerOgSikringssoner/collections", "other"]);
  for (let i = 0; i < 2_000; i++) await features(`made-up-${i}`);
  const after = await scrape();
  assert.deepEqual(endpointLabels(after), labels, "no label added");
  assert.equal(after.split("\n").length, before.split("\n").length, "no line added");
  assert.match(
    after,
    /^opendata_upstream_requests_total\{provider="riksantikvaren_ogc",endpoint="other",status="404"\} 2001$/m,
  );
  assert.equal(s.fake.requests.length, 2_002, "every call still went upstream");
});

Deno.test("declaredEndpoint() names the declared pattern a family matches, else other", () => {
  const declared = ["/", "*/MapServer", "brukerminner/collections"];
  const base = "https://kart.ra.no/arcgis/rest/services/Distribusjon";
  assert.equal(declaredEndpoint("kart.ra.no/arcgis/rest/services/Distribusjon", base, declared), "/");
  assert.equal(
    declaredEndpoint("kart.ra.no/arcgis/rest/services/Distribusjon/anything/MapServer", base, declared),
    "*/MapServer",
  );
  assert.equal(
    declaredEndpoint("api.ra.no/brukerminner/collections", "https://api.ra.no", declared),
    "brukerminner/collections",
  );
  assert.equal(declaredEndpoint("api.ra.no/made-up/collections", "https://api.ra.no", declared), "other");
});

Deno.test("ServerMetrics.endpointLabel() gives a provider at most MAX_ENDPOINT_LABELS labels, then other", () => {
  const m = new ServerMetrics();
  const given = new Set<string>();
  for (let i = 0; i < 500; i++) given.add(m.endpointLabel("wikipedia", `x${i}.wikipedia.org/w/api.php`));
  assert.equal(given.size, MAX_ENDPOINT_LABELS + 1);
  assert.ok(given.has("other"));
  assert.equal(m.endpointLabel("wikipedia", "x0.wikipedia.org/w/api.php"), "x0.wikipedia.org/w/api.php");
  assert.equal(m.endpointLabel("fred", "api.stlouisfed.org/fred/series"), "api.stlouisfed.org/fred/series");
});

Deno.test("ServerMetrics breaker gauge names a family by the label its requests were counted under", async () => {
  const m = new ServerMetrics();
  assert.equal(m.endpointLabel("riksantikvaren_ogc", "other", "api.ra.no/made-up/collections"), "other");
  m.breakers = () =>
    Promise.resolve({ "riksantikvaren_ogc api.ra.no/made-up/collections": { state: "open" } });
  const text = await m.render();
  assert.match(
    text,
    /^opendata_circuit_breaker_state\{provider="riksantikvaren_ogc",endpoint="other",state="open"\} 1$/m,
  );
  assert.doesNotMatch(text, /made-up/);
});
