// Replayable provenance (docs/ARCHITECTURE.md): the HTTP client records each upstream answer of a call in its
// request scope (secrets masked, SHA-256 of the body, retrieval time); the core builds the
// provenance, keeps citations and puts the object into JSON texts or a line under others.
import assert from "node:assert/strict";
import { FakeClock } from "../../lib/clock.ts";
import { ResponseCache } from "../../lib/http/cache.ts";
import { requestScope } from "../../lib/http/request_scope.ts";
import { DEFAULT_RETRY_POLICY } from "../../lib/http/retry.ts";
import { HttpRuntime, loadHttpClient } from "../../lib/http/runtime.ts";
import { Logger } from "../../lib/log.ts";
import { clampText } from "../../lib/mcp/shaping.ts";
import {
  buildProvenance,
  citationTemplate,
  cite,
  newRecord,
  provenanceReserve,
  withProvenance,
} from "../../lib/output/provenance.ts";
import type { CitationStore, Provenance } from "../../lib/output/provenance.ts";
import { FakeUpstream } from "../fakes/upstream.ts";

// Clients are made here directly (the app loads their code with a provider's).
await loadHttpClient();

const BODY = '{"observations":[1,2,3]}';

async function sha256(text: string): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function setup(fake: FakeUpstream, clock: FakeClock) {
  const runtime = new HttpRuntime({ clock, random: () => 0.5, logger: new Logger({ write: () => {} }) });
  return runtime.client({
    provider: "fred",
    upstreamName: "Test API",
    baseUrl: fake.origin,
    timeoutMs: 5_000,
    retry: DEFAULT_RETRY_POLICY,
    secretParams: ["api_key"],
    cacheTtlMs: 60_000,
    licence: "Test terms",
  });
}

function citations(clock: FakeClock): CitationStore {
  return { store: new ResponseCache(1 << 20), ttlMs: 1000, now: () => clock.now() };
}

Deno.test("HttpClient records each answer of a call in its scope, secrets masked, cache hits with their fetch time", async () => {
  await using fake = FakeUpstream.start([{
    path: "/obs",
    reply: { body: BODY, contentType: "application/json" },
  }]);
  const clock = new FakeClock(1_800_000_000_000);
  const client = setup(fake, clock);
  const record = newRecord();
  await requestScope.run({ fresh: false, record }, async () => {
    await client.json("obs", { query: { series_id: "GNPCA", api_key: "k".repeat(32) } });
    clock.advance(5_000);
    await client.json("obs", { query: { series_id: "GNPCA", api_key: "k".repeat(32) } });
    cite({ as_of: "vintage 2026-01-01", permalink: "https://example.org/GNPCA" });
  });
  assert.equal(record.calls.length, 2);
  const [live, hit] = record.calls;
  assert.equal(live!.cache, "miss");
  assert.equal(hit!.cache, "hit");
  assert.equal(live!.sha256, await sha256(BODY));
  assert.equal(hit!.sha256, live!.sha256);
  assert.equal(hit!.retrievedAt, live!.retrievedAt, "a cached answer keeps the time it was fetched");
  assert.match(live!.url, /api_key=\*\*\*/);
  assert.ok(!live!.url.includes("kkkk"));
  assert.deepEqual(live!.secrets, ["api_key"]);
  assert.equal(live!.licence, "Test terms");
  // Outside a scope with a record, nothing is written down.
  await client.json("obs", { query: { series_id: "X" } });
  assert.equal(record.calls.length, 2);

  const p = (await buildProvenance(record, citations(clock)))!;
  assert.equal(p.permalink, "https://example.org/GNPCA");
  assert.equal(p.as_of, "vintage 2026-01-01");
  assert.equal(p.licence, "Test terms");
  assert.equal(p.retrieved_at, new Date(1_800_000_000_000).toISOString().replace(".000", ""));
  assert.equal(p.requests_total, 2);
  assert.equal(p.requests!.length, 2);
  assert.match(p.citation, /^opendata:\/\/citation\/fred\/[0-9a-f]{20}$/);
});

Deno.test("buildProvenance() keeps a citation that reads back the request; an unknown or expired one is not found", async () => {
  const clock = new FakeClock(1_800_000_000_000);
  const store = citations(clock);
  const record = newRecord();
  record.calls.push({
    provider: "fred",
    source: "Test API",
    method: "GET",
    url: "https://api.example.org/obs?series_id=GNPCA&api_key=***",
    secrets: ["api_key"],
    sha256: "a".repeat(64),
    retrievedAt: clock.now(),
    status: 200,
    cache: "miss",
  });
  const p = (await buildProvenance(record, store))!;
  const template = citationTemplate("opendata-mcp/test (+https://example.org; ops@example.org)", store);
  const [, provider, id] = /^opendata:\/\/citation\/([^/]+)\/(.+)$/.exec(p.citation)!;
  const read = await template.read(new URL(p.citation), { provider: provider!, id: id! }, {} as never);
  const doc = JSON.parse((read as { contents: { text: string }[] }).contents[0]!.text);
  assert.equal(doc.request.url, "https://api.example.org/obs?series_id=GNPCA&api_key=***");
  assert.deepEqual(doc.secrets_left_out, ["api_key"]);
  assert.equal(doc.response.sha256, "a".repeat(64));
  assert.equal(
    doc.replay,
    "curl -sS -A 'opendata-mcp/test (+https://example.org; ops@example.org)' 'https://api.example.org/obs?series_id=GNPCA&api_key=***'",
  );
  clock.advance(1_001);
  // The answer no longer carries the request (its citation did): the error names what does work.
  await assert.rejects(
    Promise.resolve(template.read(new URL(p.citation), { provider: provider!, id: id! }, {} as never)),
    (e: Error) => {
      assert.match(e.message, /No such citation here[\s\S]*Call the tool again with the same arguments/);
      assert.doesNotMatch(e.message, /provenance\.request\b/);
      assert.ok(!("request" in p), "the provenance object has no request");
      return true;
    },
  );
  await assert.rejects(
    Promise.resolve(
      template.read(new URL("opendata://citation/fred/x"), { provider: "fred", id: "x" }, {} as never),
    ),
    /No such citation here/,
  );
  assert.equal(await buildProvenance(newRecord(), store), undefined, "no upstream answer, nothing to cite");
});

Deno.test("citationTemplate says where citations live: a process's memory is not called an expiry", async () => {
  const read = (kept: "shared" | "process" | undefined) =>
    Promise.resolve(
      citationTemplate("ua", { ...citations(new FakeClock(0)), ...(kept ? { kept } : {}) })
        .read(new URL("opendata://citation/fred/0123456789abcdef0123"), {
          provider: "fred",
          id: "0123456789abcdef0123",
        }, {} as never),
    );
  // In process (stdio, one replica without Redis): an earlier run's citation is gone with its process.
  await assert.rejects(
    read(undefined),
    /memory of the server process that made them, so one from an earlier run/,
  );
  await assert.rejects(
    read("process"),
    (e: Error) => !/it expired \(citations are kept a day\)/.test(e.message),
  );
  // Shared (Redis): kept a day, across replicas.
  await assert.rejects(
    read("shared"),
    /it expired \(citations are kept a day\) or was made by another deployment/,
  );
});

Deno.test("withProvenance() puts the object inside a JSON text and a line under others, within the limit", () => {
  const p: Provenance = {
    source: "Test API",
    permalink: "https://example.org/x",
    licence: "CC BY 4.0",
    retrieved_at: "2026-11-27T05:00:00Z",
    as_of: null,
    sha256: "b".repeat(64),
    citation: "opendata://citation/test/0123456789abcdef0123",
  };
  const structured = { items: [1, 2] };
  const json = withProvenance(JSON.stringify(structured, null, 2), structured, p, 25_000, clampText);
  assert.deepEqual(JSON.parse(json.text), { ...structured, provenance: p });
  assert.deepEqual(json.structured, { ...structured, provenance: p });
  const md = withProvenance("# Title\n\nbody", structured, p, 25_000, clampText);
  assert.equal(
    md.text,
    "# Title\n\nbody\n\nProvenance: Test API https://example.org/x · licence CC BY 4.0 · retrieved 2026-11-27T05:00:00Z · sha256 " +
      `${"b".repeat(64)} · replay opendata://citation/test/0123456789abcdef0123`,
  );
  // A text that names the licence or the permalink already keeps them out of the line: said once.
  const named = withProvenance("# Title\n\nLicence: CC BY 4.0", structured, p, 25_000, clampText);
  assert.doesNotMatch(named.line!, /licence/);
  assert.match(
    named.text,
    /Licence: CC BY 4\.0\n\nProvenance: Test API https:\/\/example\.org\/x · retrieved/,
  );
  const linked = withProvenance("Source: https://example.org/x", structured, p, 25_000, clampText);
  assert.match(linked.line!, /^\n\nProvenance: Test API · licence CC BY 4\.0 · retrieved/);
  const dated = withProvenance(
    "Vintage: FRED's data as of 2013-08-14.",
    structured,
    {
      ...p,
      as_of: "vintage: FRED's data as of 2013-08-14",
    },
    25_000,
    clampText,
  );
  assert.doesNotMatch(dated.line!, /as of/, "the as-of the text states, its label aside, is not repeated");
  // Only a whole mention counts: a longer URL that starts with the permalink, or a date-time that
  // starts with the as-of, does not say them; a sentence's full stop or a link's bracket after them does.
  for (
    const longer of ["https://example.org/x/y", "https://example.org/x2", "https://example.org/x?page=2"]
  ) {
    const line = withProvenance(`Source: ${longer}`, structured, p, 25_000, clampText).line!;
    assert.match(line, /Test API https:\/\/example\.org\/x · /, longer);
  }
  assert.match(
    withProvenance("See www.https://example.org/x", structured, p, 25_000, clampText).line!,
    /Test API https:\/\/example\.org\/x · /,
  );
  for (
    const whole of [
      "See https://example.org/x.",
      "[page](https://example.org/x)",
      "<https://example.org/x>, ok",
    ]
  ) {
    const line = withProvenance(whole, structured, p, 25_000, clampText).line!;
    assert.match(line, /^\n\nProvenance: Test API · /, whole);
  }
  const stamped = withProvenance(
    "Updated 2013-08-14T10:00:00Z",
    structured,
    { ...p, as_of: "2013-08-14" },
    25_000,
    clampText,
  );
  assert.match(stamped.line!, /as of 2013-08-14/);
  assert.doesNotMatch(
    withProvenance("Licence: CC BY 4.0.", structured, p, 25_000, clampText).line!,
    /licence/,
  );
  assert.match(
    withProvenance("Licence: CC BY 4.0.1", structured, p, 25_000, clampText).line!,
    /licence CC BY 4\.0/,
  );
  // Unless the cut to make room for the line took them away: then the line says them.
  const tail = "Source: https://example.org/x Licence: CC BY 4.0";
  const cutAway = withProvenance(`${"x\n".repeat(1000)}${tail}`, structured, p, 1000, clampText);
  assert.match(cutAway.line!, /Test API https:\/\/example\.org\/x · licence CC BY 4\.0/);
  assert.ok(cutAway.text.length <= 1000);
  // The as-of too, when the text said it without its label and the cut took that away.
  const vintage = { ...p, as_of: "vintage: FRED's data as of 2013-08-14" };
  const asOfCut = withProvenance(
    `${"x\n".repeat(1000)}Values known: FRED's data as of 2013-08-14.`,
    structured,
    vintage,
    1000,
    clampText,
  );
  assert.match(asOfCut.line!, /as of vintage: FRED's data as of 2013-08-14/);
  assert.doesNotMatch(asOfCut.text.slice(0, -asOfCut.line!.length), /2013-08-14/);
  // A text that fills the limit makes room: the line is never cut, the text ends within the limit.
  const long = withProvenance("x\n".repeat(3000), structured, p, 2000, clampText);
  assert.ok(long.text.length <= 2000, `${long.text.length}`);
  assert.ok(long.text.endsWith("replay opendata://citation/test/0123456789abcdef0123"));
  // Where the structured content is short of room, the list of requests goes first; their count stays.
  const several: Provenance = {
    ...p,
    requests: [1, 2].map((i) => ({
      sha256: String(i).repeat(64),
      retrieved_at: p.retrieved_at,
      citation: `opendata://citation/test/${String(i).repeat(20)}`,
    })),
    requests_total: 2,
  };
  const big = { blob: "y".repeat(1400) };
  const whole = JSON.stringify({ ...big, provenance: several }).length;
  const tight = withProvenance("t", big, several, whole - 10, clampText);
  const kept = tight.structured!["provenance"] as Provenance;
  assert.equal(kept.requests, undefined);
  assert.equal(kept.requests_total, 2);
  assert.equal(kept.citation, p.citation);
  assert.equal(provenanceReserve(25_000), 1000);
  assert.equal(provenanceReserve(3000), 600);
});
