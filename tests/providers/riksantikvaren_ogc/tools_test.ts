import { payloadOf, providerTools } from "../../harness/results.ts";
// The riksantikvaren-* tools end to end: the real server over stdio (scoped permissions) against
// a fake api.ra.no serving the synthetic fixtures of tests/fixtures/ra_ogc/.
import assert from "node:assert/strict";
import { openProvider } from "../../harness/provider.ts";
import type { ProviderSession } from "../../harness/provider.ts";
import { FakeUpstream, fixtureText } from "../../fakes/upstream.ts";
import type { Received, Reply } from "../../fakes/upstream.ts";

const DS = "LokaliteterEnkeltminnerOgSikringssoner";
const ITEMS = `/${DS}/collections/lokaliteter/items`;
const CENTER = { lat: 59.9075, lon: 10.7637 };

type Json = Record<string, unknown>;
interface Called {
  isError: boolean;
  text: string;
  structured: Json;
  payload: Json;
}

async function call(s: ProviderSession, name: string, args: Json): Promise<Called> {
  const r = await s.client.callTool({ name, arguments: args });
  const content = r.content as { type: string; text: string }[];
  return {
    isError: r.isError === true,
    text: content[0]?.text ?? "",
    structured: (r.structuredContent ?? {}) as Json,
    payload: r.isError ? payloadOf(r) : {},
  };
}

/** A fixture with api.ra.no's absolute links pointed at the fake. */
function fixture(name: string, origin: string): Reply {
  return {
    body: fixtureText(`ra_ogc/${name}`).replaceAll("https://api.ra.no", origin),
    contentType: "application/geo+json",
  };
}

/** A square polygon of about 2 km with `n` vertices on its edge, as a huge feature. */
function hugeFeature(n: number): Json {
  const ring: number[][] = [];
  for (let i = 0; i < n; i++) {
    const t = (2 * Math.PI * i) / n;
    const r = 0.01 * (1 + 0.02 * Math.sin(37 * t));
    ring.push([10.7637 + 2 * r * Math.cos(t), 59.9075 + r * Math.sin(t)]);
  }
  ring.push(ring[0]!);
  return {
    type: "Feature",
    id: "99999",
    geometry: { type: "Polygon", coordinates: [ring] },
    properties: { kulturminneId: "99999", navn: "Stor kulturmiljøflate", kommune: "0301" },
  };
}

function itemsReply(origin: string, private1: string) {
  return (req: Received): Reply => {
    const q = req.url.searchParams;
    if (q.get("f") !== "json") return { status: 400, json: { error: "f=json expected" } };
    if (q.has("filter")) {
      if (q.get("filter")!.includes("CASEI(navn)")) return fixture("items_lokaliteter_p2.json", origin);
      return { status: 400, json: { code: "InvalidParameterValue", description: "Unknown queryable" } };
    }
    if (q.get("limit") === "2" && q.get("offset") === "0" && q.get("bbox") === "10.76,59.905,10.77,59.912") {
      return fixture("items_lokaliteter_p1.json", origin);
    }
    if (q.get("limit") === "2" && q.get("offset") === "2") {
      return fixture("items_lokaliteter_p2.json", origin);
    }
    if (q.get("limit") === "3") {
      // Page 1 whose next link points at a private address.
      const body = fixtureText("ra_ogc/items_lokaliteter_p1.json").replaceAll("https://api.ra.no", private1);
      return { body, contentType: "application/geo+json" };
    }
    if (q.get("limit") === "4") {
      const body = fixtureText("ra_ogc/items_lokaliteter_p1.json").replaceAll(
        "https://api.ra.no",
        "http://169.254.169.254",
      );
      return { body, contentType: "application/geo+json" };
    }
    if (q.get("limit") === "40") return { ...fixture("items_lokaliteter_p1.json", origin), truncateAt: 700 };
    if (q.get("limit") === "20") return fixture("items_lokaliteter_p2.json", origin);
    if (q.get("limit") === "5") return { status: 302, headers: { location: "http://10.0.0.1/steal" } };
    if (q.get("limit") === "7") return { status: 503, body: "<html>down</html>", contentType: "text/html" };
    if (q.get("limit") === "1") return fixture("items_lokaliteter_p1.json", origin);
    if (q.has("bbox")) return fixture("items_lokaliteter_nearby.json", origin);
    return { status: 404, json: { error: "unexpected query" } };
  };
}

Deno.test("riksantikvaren_ogc tools over stdio against a fake api.ra.no", async (t) => {
  // A second local server standing for a private address the upstream's next link points at.
  await using bystander = FakeUpstream.start([{ path: /.*/, reply: { json: { stolen: true } } }]);
  const privateOrigin = `http://localhost:${new URL(bystander.origin).port}`;
  await using fake = FakeUpstream.start([]);
  const o = fake.origin;
  fake.route({ path: "/", reply: fixture("catalog.json", o) })
    .route({ path: `/${DS}/collections`, reply: fixture(`collections_${DS}.json`, o) })
    .route({ path: "/brukerminner/collections", reply: fixture("collections_brukerminner.json", o) })
    .route({ path: "/kulturminner/collections", reply: { status: 500, json: { error: "boom" } } })
    .route({ path: ITEMS, reply: itemsReply(o, privateOrigin) })
    .route({ path: `${ITEMS}/90001`, reply: fixture("feature_lokaliteter_90001.json", o) })
    // A collection whose server ignores offset: every page is page 1, with a next link.
    .route({ path: `/${DS}/collections/enkeltminner/items`, reply: fixture("items_lokaliteter_p1.json", o) })
    .route({ path: `${ITEMS}/99999`, reply: { json: hugeFeature(30_000) } })
    .route({
      path: "/brukerminner/collections/brukerminner/items",
      reply: fixture("items_brukerminner_p1.json", o),
    });
  await using s = await openProvider({
    provider: "riksantikvaren_ogc",
    fake,
    settings: { max_retries: 0, cache_ttl: 0 },
  });

  await t.step("tools/list serves the four tools with read-only annotations and output schemas", async () => {
    const tools = providerTools((await s.client.listTools()).tools);
    assert.deepEqual(tools.map((x) => x.name), [
      "riksantikvaren-collections",
      "riksantikvaren-features",
      "riksantikvaren-feature",
      "riksantikvaren-nearby",
    ]);
    for (const tool of tools) {
      assert.equal(tool.annotations?.readOnlyHint, true);
      assert.equal(tool.annotations?.openWorldHint, true);
      assert.ok(tool.outputSchema);
      assert.match(tool.description ?? "", /api\.ra\.no|collection|point/);
    }
  });

  await t.step(
    "riksantikvaren-collections lists datasets with collections and isolates a failing one",
    async () => {
      const r = await call(s, "riksantikvaren-collections", { response_format: "json" });
      assert.equal(r.isError, false, r.text);
      const datasets = r.structured["datasets"] as Json[];
      assert.deepEqual(datasets.map((d) => d["id"]), [DS, "brukerminner", "kulturminner"]);
      const lok = datasets[0]!;
      assert.deepEqual((lok["collections"] as Json[]).map((c) => c["id"]), [
        "lokaliteter",
        "enkeltminner",
        "sikringssoner",
      ]);
      assert.deepEqual((lok["collections"] as Json[])[2]!["bbox"], [4.0, 57.9, 31.2, 71.2]);
      assert.equal(datasets[2]!["collections"], null);
      assert.match(String(datasets[2]!["error"]), /HTTP 500/);
      assert.equal(r.structured["total"], 3);
      assert.deepEqual(JSON.parse(r.text), r.structured);
      const md = await call(s, "riksantikvaren-collections", { dataset: DS });
      assert.match(md.text, /\| lokaliteter \| Lokaliteter \| feature \|/);
      assert.match(md.text, /Licence: NLOD 2\.0/);
      assert.match(md.text, /\[lon, lat\]/);
    },
  );

  await t.step("riksantikvaren-collections reports an unknown dataset as NOT_FOUND", async () => {
    const r = await call(s, "riksantikvaren-collections", { dataset: "nope" });
    assert.equal(r.isError, true);
    assert.equal(r.payload["error_type"], "NOT_FOUND");
    assert.match(String(r.payload["hint"]), /riksantikvaren-collections/);
  });

  await t.step(
    "riksantikvaren-features pages a bbox listing with a cursor that resumes at the next record",
    async () => {
      const bbox = [10.76, 59.905, 10.77, 59.912];
      const r = await call(s, "riksantikvaren-features", {
        collection: "lokaliteter",
        bbox,
        limit: 2,
        response_format: "json",
      });
      assert.equal(r.isError, false, r.text);
      const st = r.structured;
      assert.equal(st["dataset"], DS, "dataset looked up from the collection");
      assert.deepEqual([st["total"], st["count"], st["offset"], st["has_more"], st["next_offset"]], [
        3,
        2,
        0,
        true,
        2,
      ]);
      assert.equal(st["total_is_exact"], false, "the box is not read to its end yet");
      assert.equal(st["upstream_matched"], 3);
      const cursor = st["next_cursor"] as string;
      assert.match(cursor, /^ra1\./);
      assert.ok(!cursor.includes("127.0.0.1") && !cursor.includes("http"), "the cursor is opaque");
      const f = (st["features"] as Json[])[0]!;
      assert.equal(f["id"], "90001");
      assert.equal(f["name"], "Testkirke ruin");
      assert.equal(f["category"], "Arkeologisk lokalitet – Kirkested");
      assert.equal(f["protection"], "Automatisk fredet, KML (Kulturminnelova av 1978) § 4");
      assert.equal(f["municipality"], "Oslo - Oslove (0301)");
      assert.equal(f["dating"], "Middelalder");
      assert.equal(f["kulturminnesok_url"], "https://kulturminnesok.no/ra/lokalitet/90001");
      assert.ok(
        Math.abs((f["lat"] as number) - CENTER.lat) < 1e-4 &&
          Math.abs((f["lon"] as number) - CENTER.lon) < 1e-4,
      );
      assert.equal(f["geometry_type"], "MultiPolygon");
      assert.equal(f["geometry"], null, "no geometry unless asked");
      assert.match(String((st["licence"] as Json)["name"]), /NLOD/);

      const next = await call(s, "riksantikvaren-features", { cursor, response_format: "json" });
      assert.equal(next.isError, false, next.text);
      assert.deepEqual(
        [
          next.structured["offset"],
          next.structured["count"],
          next.structured["has_more"],
          next.structured["next_cursor"],
        ],
        [2, 1, false, null],
      );
      assert.equal(next.structured["total_is_exact"], true);
      assert.equal(next.structured["total"], 3);
      assert.equal((next.structured["features"] as Json[])[0]!["id"], "90003");
      const sent = fake.requestsTo(ITEMS).at(-1)!.url.searchParams;
      assert.equal(sent.get("offset"), "2");
      assert.equal(sent.get("bbox"), "10.76,59.905,10.77,59.912");
      assert.equal(sent.get("f"), "json");

      const md = await call(s, "riksantikvaren-features", { collection: "lokaliteter", bbox, limit: 2 });
      assert.match(
        md.text,
        /Features 1–2 of at least 2 located in bbox \[10\.76, 59\.905, 10\.77, 59\.912\]/,
      );
      assert.match(md.text, /### 1\. Testkirke ruin/);
      assert.match(
        md.text,
        /Location: lat 59\.9075\d, lon 10\.7637\d \(GeoJSON \[10\.7637\d*, 59\.9075\d*\]\)/,
      );
      assert.match(md.text, /More: call again with cursor="ra1\.[^"]+" \(it resumes where this page stopped/);
    },
  );

  await t.step("riksantikvaren-features refuses invalid bboxes before calling the upstream", async () => {
    const before = fake.requests.length;
    const cases: [unknown, RegExp][] = [
      [[10.77, 59.905, 10.76, 59.912], /min_lon 10\.77 must be less than max_lon 10\.76/],
      [[59.905, 10.76, 59.912, 95], /max_lat 95 is outside/],
      [[10.7, 59.9, 10.8], /4/],
      [[4, 58, 31, 71], /at most 200 km/],
      [[-179.5, 59.9, 179.5, 60], /at most 200 km/],
      [[-190, 59.9, 10.8, 60], /min_lon -190 is outside/],
    ];
    for (const [bbox, message] of cases) {
      const r = await call(s, "riksantikvaren-features", { collection: "lokaliteter", bbox });
      assert.equal(r.isError, true, JSON.stringify(bbox));
      assert.equal(r.payload["error_type"], "VALIDATION_ERROR");
      assert.equal(r.payload["field"], "bbox");
      assert.match(String(r.payload["message"]), message);
    }
    assert.equal(fake.requests.length, before);
  });

  await t.step("riksantikvaren-features rejects bad arguments naming the field", async () => {
    const bad: [Json, string][] = [
      [{}, "collection"],
      [{ collection: "../etc" }, "collection"],
      [{ collection: "lokaliteter", limit: 0 }, "limit"],
      [{ collection: "lokaliteter", limit: 101 }, "limit"],
      [{ collection: "lokaliteter", offset: -1 }, "offset"],
      [{ collection: "lokaliteter", dataset: "a/b/c" }, "dataset"],
      [{ collection: "lokaliteter", surprise: 1 }, ""],
      [{ collection: "lokaliteter", response_format: "xml" }, "response_format"],
    ];
    for (const [args, field] of bad) {
      const r = await call(s, "riksantikvaren-features", args);
      assert.equal(r.isError, true, JSON.stringify(args));
      assert.equal(r.payload["error_type"], "VALIDATION_ERROR");
      if (field) assert.equal(r.payload["field"], field, JSON.stringify(args));
    }
  });

  await t.step("riksantikvaren-features does not follow a next link to a private address", async () => {
    const r = await call(s, "riksantikvaren-features", {
      collection: "lokaliteter",
      limit: 3,
      response_format: "json",
    });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.structured["next_cursor"], null);
    assert.equal(r.structured["has_more"], true);
    assert.equal(r.structured["next_offset"], 2);
    const warnings = r.structured["warnings"] as string[];
    assert.match(warnings.join(" "), /next link was refused and not followed: it points at "localhost"/);
    const meta = await call(s, "riksantikvaren-features", { collection: "lokaliteter", limit: 4 });
    assert.match(meta.text, /points at "169\.254\.169\.254", the cloud metadata service address/);
    assert.doesNotMatch(meta.text, /cursor="/);
    assert.equal(bystander.requests.length, 0, "the private address was never contacted");
  });

  await t.step(
    "riksantikvaren-features refuses a forged cursor and a redirect to a private address",
    async () => {
      const forged = "ra1." + btoa(JSON.stringify({ u: "http://169.254.169.254/latest/meta-data/" }));
      for (const cursor of [forged, "not-a-cursor", "ra1.%%%"]) {
        const r = await call(s, "riksantikvaren-features", { cursor });
        assert.equal(r.payload["error_type"], "VALIDATION_ERROR", cursor);
        assert.equal(r.payload["field"], "cursor");
      }
      const redirected = await call(s, "riksantikvaren-features", { collection: "lokaliteter", limit: 5 });
      assert.equal(redirected.isError, true);
      assert.equal(redirected.payload["error_type"], "UPSTREAM_REDIRECT_REFUSED");
      assert.match(String(redirected.payload["message"]), /"10\.0\.0\.1".*private address/);
    },
  );

  await t.step("riksantikvaren-features sends a CQL2 text filter and explains a refused one", async () => {
    const r = await call(s, "riksantikvaren-features", { collection: "lokaliteter", query: "bygde'borg" });
    assert.equal(r.isError, false, r.text);
    const sent = fake.requestsTo(ITEMS).at(-1)!.url.searchParams;
    assert.equal(sent.get("filter"), "CASEI(navn) LIKE CASEI('%bygde''borg%')");
    assert.equal(sent.get("filter-lang"), "cql2-text");
    assert.match(r.text, /matching "bygde'borg"/);
    const refused = await call(s, "riksantikvaren-features", {
      collection: "lokaliteter",
      query: "x",
      query_property: "tittel",
    });
    assert.equal(refused.payload["error_type"], "VALIDATION_ERROR");
    assert.equal(refused.payload["field"], "query");
    assert.match(String(refused.payload["hint"]), /query_property/);
  });

  await t.step(
    "riksantikvaren-features reads brukerminner without numberMatched and with a text position",
    async () => {
      const r = await call(s, "riksantikvaren-features", {
        collection: "brukerminner",
        limit: 2,
        response_format: "json",
      });
      assert.equal(r.isError, false, r.text);
      assert.equal(r.structured["total_is_exact"], false);
      assert.deepEqual([r.structured["total"], r.structured["has_more"]], [3, true]);
      assert.match(String(r.structured["next_cursor"]), /^ra1\./);
      const [a, b] = r.structured["features"] as Json[];
      assert.equal(a!["name"], "Bestemors bakeri");
      assert.equal((a!["images"] as Json[])[0]!["licence"], "CC BY 4.0");
      assert.equal(b!["geometry_type"], null);
      assert.ok(Math.abs((b!["lat"] as number) - 59.905701) < 1e-5, "gpsposisjon is read lat first");
      assert.match(String((r.structured["licence"] as Json)["name"]), /CC BY 4\.0/);
      assert.match(String((r.structured["licence"] as Json)["note"]), /not quality-assured/);
    },
  );

  await t.step("riksantikvaren-features asks again with a smaller page when a body is cut off", async () => {
    const r = await call(s, "riksantikvaren-features", {
      collection: "lokaliteter",
      limit: 40,
      response_format: "json",
    });
    assert.equal(r.isError, false, r.text);
    assert.match(
      (r.structured["warnings"] as string[])[0]!,
      /broken page for limit=40; asked again with limit=20/,
    );
    assert.equal(r.structured["count"], 1);
  });

  await t.step("riksantikvaren-features keeps the page size when the upstream ignores limit", async () => {
    const r = await call(s, "riksantikvaren-features", {
      collection: "lokaliteter",
      limit: 1,
      response_format: "json",
    });
    assert.equal(r.isError, false, r.text);
    assert.deepEqual(
      [
        r.structured["count"],
        r.structured["has_more"],
        r.structured["next_offset"],
        r.structured["next_cursor"],
      ],
      [1, true, 1, null],
    );
    assert.match((r.structured["warnings"] as string[]).join(" "), /more features than asked/);
  });

  await t.step("riksantikvaren-features reports an upstream outage as a retryable error", async () => {
    const r = await call(s, "riksantikvaren-features", { collection: "lokaliteter", limit: 7 });
    assert.equal(r.isError, true);
    assert.equal(r.payload["error_type"], "API_ERROR");
    assert.equal(r.payload["status"], 503);
    assert.equal(r.payload["retryable"], true);
    assert.doesNotMatch(r.text, /127\.0\.0\.1/);
  });

  await t.step(
    "riksantikvaren-feature returns one feature with all properties and its geometry",
    async () => {
      const r = await call(s, "riksantikvaren-feature", {
        collection: "lokaliteter",
        id: 90001,
        response_format: "json",
      });
      assert.equal(r.isError, false, r.text);
      const f = r.structured["feature"] as Json;
      assert.equal(f["name"], "Testkirke ruin");
      assert.equal((f["geometry"] as Json)["type"], "MultiPolygon");
      assert.equal(f["geometry_note"], null);
      assert.equal(
        (f["properties"] as Json)["linkKulturminnesøk"],
        "https://kulturminnesok.no/ra/lokalitet/90001",
      );
      assert.ok((f["properties"] as Json)["senterpunkt"], "nested properties are kept for one feature");
      const md = await call(s, "riksantikvaren-feature", { collection: "lokaliteter", id: "90001" });
      assert.match(md.text, /^## Testkirke ruin/);
      assert.match(md.text, /Geometry \(GeoJSON, \[lon, lat\]\):/);
      assert.match(md.text, /Source: http:\/\/127\.0\.0\.1:\d+\/Lokaliteter.*\/items\/90001\?f=json/);
    },
  );

  await t.step(
    "riksantikvaren-feature answers NOT_FOUND for an unknown id and refuses a path-like id",
    async () => {
      const r = await call(s, "riksantikvaren-feature", { collection: "lokaliteter", id: "12345" });
      assert.equal(r.payload["error_type"], "NOT_FOUND");
      assert.match(String(r.payload["message"]), /No feature "12345" in collection "lokaliteter"/);
      const bad = await call(s, "riksantikvaren-feature", { collection: "lokaliteter", id: ".." });
      assert.equal(bad.payload["error_type"], "VALIDATION_ERROR");
      assert.equal(bad.payload["field"], "id");
    },
  );

  await t.step(
    "riksantikvaren-feature simplifies a huge polygon to fit the character limit and says so",
    async () => {
      for (const format of ["json", "markdown"]) {
        const r = await call(s, "riksantikvaren-feature", {
          collection: "lokaliteter",
          id: "99999",
          response_format: format,
        });
        assert.equal(r.isError, false, r.text);
        assert.ok(r.text.length <= 25_000, `text is ${r.text.length} characters`);
        assert.ok(JSON.stringify(r.structured).length <= 25_000);
        const f = r.structured["feature"] as Json;
        const g = f["geometry"] as { type: string; coordinates: number[][][] };
        assert.equal(g.type, "Polygon");
        const kept = g.coordinates[0]!.length;
        assert.ok(kept > 10 && kept < 30_001, `kept ${kept} vertices`);
        assert.deepEqual(g.coordinates[0]![0], g.coordinates[0]!.at(-1), "ring stays closed");
        assert.match(String(f["geometry_note"]), new RegExp(`simplified.*30001 → ${kept} vertices`));
        if (format === "markdown") {
          assert.match(
            r.text,
            /Geometry: Geometry simplified to fit the response limit/,
          );
          // The text says what the shape is in one line; its coordinates are in the structured content.
          const line = r.text.split("\n").find((l) => l.startsWith("- Geometry: Polygon"))!;
          assert.match(
            line,
            new RegExp(
              `^- Geometry: Polygon, ${kept.toLocaleString("en-US")} vertices, about \\d+ ha, bbox \\[`,
            ),
          );
          const ha = Number(/about (\d+) ha/.exec(line)![1]);
          assert.ok(ha > 340 && ha < 420, `a circle of about 1.1 km radius: ${ha} ha`);
          assert.doesNotMatch(r.text, /"coordinates"/);
          assert.ok(r.text.length < 2500, `${r.text.length} characters`);
        }
      }
    },
  );

  await t.step(
    "riksantikvaren-nearby ranks by true distance and leaves out what is beyond the radius",
    async () => {
      const r = await call(s, "riksantikvaren-nearby", { ...CENTER, radius_m: 500, response_format: "json" });
      assert.equal(r.isError, false, r.text);
      const fs = r.structured["features"] as Json[];
      assert.deepEqual(fs.map((f) => f["id"]), ["90001", "90002", "90003"]);
      const d = fs.map((f) => f["distance_m"] as number);
      assert.equal(d[0], 0, "inside the site");
      assert.ok(Math.abs(d[1]! - 130) < 3, `edge of a 40 m square 150 m away: ${d[1]}`);
      assert.ok(Math.abs(d[2]! - 385) < 3, `edge of a 30 m square 400 m away: ${d[2]}`);
      assert.equal(r.structured["without_location"], 1);
      assert.equal(r.structured["scan_complete"], true);
      assert.equal(r.structured["scanned"], 5);
      const box = r.structured["search_bbox"] as number[];
      const sent = fake.requestsTo(ITEMS).at(-1)!.url.searchParams;
      assert.equal(sent.get("bbox"), box.join(","));
      assert.ok(box[0]! < CENTER.lon && box[2]! > CENTER.lon && box[1]! < CENTER.lat && box[3]! > CENTER.lat);

      const md = await call(s, "riksantikvaren-nearby", { ...CENTER, radius_m: 500, limit: 2 });
      assert.match(md.text, /3 found; showing 1–2, nearest first/);
      assert.match(md.text, /Distance: 0 m/);
      assert.match(md.text, /More: call again with offset=2/);
    },
  );

  await t.step(
    "riksantikvaren-features and -nearby add GeoJSON geometries ([lon, lat]) when asked",
    async () => {
      const bbox = [10.76, 59.905, 10.77, 59.912];
      const r = await call(s, "riksantikvaren-features", {
        collection: "lokaliteter",
        bbox,
        limit: 2,
        include_geometry: true,
        response_format: "json",
      });
      const g = (r.structured["features"] as Json[])[1]!["geometry"] as {
        type: string;
        coordinates: number[][][];
      };
      assert.equal(g.type, "Polygon");
      const [lon, lat] = g.coordinates[0]![0]!;
      assert.ok(lon! > 10 && lon! < 11 && lat! > 59 && lat! < 60, "positions are [lon, lat]");
      const near = await call(s, "riksantikvaren-nearby", {
        ...CENTER,
        include_geometry: true,
        response_format: "json",
      });
      assert.equal(((near.structured["features"] as Json[])[0]!["geometry"] as Json)["type"], "MultiPolygon");
    },
  );

  await t.step("riksantikvaren-nearby ranks each feature once when the server repeats a page", async () => {
    const before = fake.requestsTo(`/${DS}/collections/enkeltminner/items`).length;
    const r = await call(s, "riksantikvaren-nearby", {
      ...CENTER,
      radius_m: 2000,
      collection: "enkeltminner",
      response_format: "json",
    });
    assert.equal(r.isError, false, r.text);
    const ids = (r.structured["features"] as Json[]).map((f) => f["id"]);
    assert.deepEqual(ids, ["90001", "90002"]);
    assert.deepEqual([r.structured["total"], r.structured["scanned"]], [2, 4], "4 records read, 2 distinct");
    assert.equal(r.structured["scan_complete"], false);
    assert.match((r.structured["warnings"] as string[]).join(" "), /same records again/);
    assert.equal(fake.requestsTo(`/${DS}/collections/enkeltminner/items`).length - before, 2);
  });

  await t.step("riksantikvaren-nearby validates lat, lon and radius_m", async () => {
    for (
      const [args, field] of [
        [{ lat: 95, lon: 10 }, "lat"],
        [{ lat: 59, lon: 200 }, "lon"],
        [{ lat: 59, lon: 10, radius_m: 5 }, "radius_m"],
        [{ lat: 59, lon: 10, radius_m: 50_000 }, "radius_m"],
      ] as [Json, string][]
    ) {
      const r = await call(s, "riksantikvaren-nearby", args);
      assert.equal(r.payload["error_type"], "VALIDATION_ERROR");
      assert.equal(r.payload["field"], field);
    }
  });
});
