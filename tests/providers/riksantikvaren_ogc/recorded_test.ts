// The riksantikvaren-* tools end to end against a fake api.ra.no serving the real recorded bodies
// of tests/fixtures/ra_ogc/ (see its README): bbox answers padded with records that have no
// geometry, string and integer ids, filters, an empty answer; plus bodies of the wrong shape and
// pages that do not come before the call's deadline (MCP_CALL_TIMEOUT is small here).
import assert from "node:assert/strict";
import { errorOf, ok, texts } from "../../harness/results.ts";
import type { ToolResult } from "../../harness/results.ts";
import { openProvider } from "../../harness/provider.ts";
import type { ProviderSession } from "../../harness/provider.ts";
import { FakeUpstream, fixtureText } from "../../fakes/upstream.ts";
import type { Received, Reply } from "../../fakes/upstream.ts";

const DS = "LokaliteterEnkeltminnerOgSikringssoner";
const LOK = `/${DS}/collections/lokaliteter/items`;
const FREDA = "/KulturminnerFredaBygninger/collections/fredabygninger/items";
const BBOX_PAGE = `ra_ogc/${DS}__lokaliteter__items_bbox_limit1000_page1__TRIMMED.json`;
const FREDA_PAGE = "ra_ogc/KulturminnerFredaBygninger__fredabygninger__items_bbox.json";
/** The bbox of the recorded requests. */
const RECORDED_BBOX = [10.79, 59.744, 10.81, 59.758];
/** Near the four located Nøstvedt sites of the recorded page (all within about 110 m). */
const NOSTVEDT = { lat: 59.75, lon: 10.798 };

type Json = Record<string, unknown>;

/** A recorded body with api.ra.no's absolute links pointed at the fake. */
function recorded(path: string, origin: string): string {
  return fixtureText(path).replaceAll("https://api.ra.no", origin);
}

/**
 * A recorded item list served as the upstream's whole list: the recorded request (offset 0,
 * limit 1000) gets the recorded body as it is; any other page is the slice of its features an
 * OGC server would send, with a next link while more follow.
 */
function listPages(req: Received, path: string, origin: string): Reply {
  const q = req.url.searchParams;
  const offset = Number(q.get("offset") ?? 0);
  const limit = Number(q.get("limit") ?? 10);
  const text = recorded(path, origin);
  if (offset === 0 && limit === 1000) return { body: text, contentType: "application/geo+json" };
  const body = JSON.parse(text) as Json & { features: Json[]; links: Json[] };
  const all = body.features;
  body.features = all.slice(offset, offset + limit);
  body["numberReturned"] = body.features.length;
  body.links = body.links.filter((l) => l["rel"] !== "next");
  if (offset + limit < all.length) {
    const next = new URL(req.url.pathname, origin);
    for (const [k, v] of q) next.searchParams.set(k, v);
    next.searchParams.set("offset", String(offset + limit));
    body.links.push({ rel: "next", href: next.toString(), title: "Nächste Seite" });
  }
  return { json: body, contentType: "application/geo+json" };
}

/** One feature of a recorded list, as `…/items/{id}` sends it. */
function featureOf(path: string, id: string, origin: string): Reply {
  const body = JSON.parse(recorded(path, origin)) as { features: Json[] };
  const f = body.features.find((x) => String(x["id"]) === id);
  return f ? { json: f, contentType: "application/geo+json" } : { status: 404, json: { code: "NotFound" } };
}

async function call(s: ProviderSession, name: string, args: Json): Promise<ToolResult> {
  return await s.client.callTool({ name, arguments: args });
}

Deno.test("riksantikvaren_ogc tools against recorded api.ra.no bodies, odd bodies and slow pages", async (t) => {
  // Items requests at or past this offset wait for `hold` (a page that does not come in time).
  let hold: PromiseWithResolvers<void> | null = null;
  let holdFrom = Infinity;
  const held = async (req: Received): Promise<void> => {
    if (hold && Number(req.url.searchParams.get("offset") ?? 0) >= holdFrom) await hold.promise;
  };
  const release = (): void => {
    hold?.resolve();
    [hold, holdFrom] = [null, Infinity];
  };
  let flaky = 0;
  let catalogOk = false;
  await using fake = FakeUpstream.start([]);
  const o = fake.origin;
  for (const ds of [DS, "KulturminnerFredaBygninger", "KulturminnerKulturmiljoer"]) {
    fake.route({
      path: `/${ds}/collections`,
      reply: { body: recorded(`ra_ogc/${ds}__collections.json`, o), contentType: "application/json" },
    });
  }
  fake.route({
    path: LOK,
    reply: async (req) => {
      await held(req);
      const filter = req.url.searchParams.get("filter") ?? "";
      if (filter.includes("Mariakirken")) {
        return { body: recorded(`ra_ogc/${DS}__lokaliteter__items_cql2_LIKE_Mariakirken.json`, o) };
      }
      if (filter.includes("Nøstvedt")) {
        return { body: recorded(`ra_ogc/${DS}__lokaliteter__items_navn_Nostvedt.json`, o) };
      }
      return listPages(req, BBOX_PAGE, o);
    },
  })
    .route({
      path: /^\/LokaliteterEnkeltminnerOgSikringssoner\/collections\/lokaliteter\/items\/[^/]+$/,
      reply: (req) => {
        const id = decodeURIComponent(req.url.pathname.split("/").pop()!);
        if (id === "51949") return { body: recorded(`ra_ogc/${DS}__lokaliteter__item_51949.json`, o) };
        return featureOf(BBOX_PAGE, id, o);
      },
    })
    .route({
      path: `/${DS}/collections/sikringssoner/items`,
      reply: { body: recorded(`ra_ogc/${DS}__sikringssoner__items_bbox_EMPTY.json`, o) },
    })
    .route({
      path: `/${DS}/collections/enkeltminner/items`,
      reply: async (req) => {
        await held(req);
        return listPages(req, BBOX_PAGE, o);
      },
    })
    .route({ path: FREDA, reply: (req) => listPages(req, FREDA_PAGE, o) })
    .route({
      path: /^\/KulturminnerFredaBygninger\/collections\/fredabygninger\/items\/\d+$/,
      reply: (req) => featureOf(FREDA_PAGE, req.url.pathname.split("/").pop()!, o),
    })
    // Bodies of the wrong shape, each sent with HTTP 200.
    .route({
      path: "/",
      reply: () => catalogOk ? { json: { apis: [{ id: DS }, { id: "Slow" }] } } : { json: { apis: "none" } },
    })
    .route({
      path: "/Slow/collections",
      reply: async () => {
        await hold?.promise;
        return { body: recorded(`ra_ogc/KulturminnerKulturmiljoer__collections.json`, o) };
      },
    })
    .route({ path: "/Garbage/collections", reply: { json: null } })
    .route({ path: "/Garbage2/collections", reply: { json: [] } })
    .route({ path: "/Garbage/collections/arr/items", reply: { json: [] } })
    .route({
      path: "/Garbage/collections/wrong/items",
      reply: { json: { type: "FeatureCollection", features: "none" } },
    })
    .route({
      path: "/Garbage/collections/nulls/items",
      reply: { json: { type: "FeatureCollection", features: [null] } },
    })
    .route({ path: "/Garbage/collections/arr/items/1", reply: { json: [1, 2] } })
    .route({ path: "/Garbage/collections/arr/items/2", reply: { json: null } })
    .route({
      path: "/Garbage/collections/flaky/items",
      reply: () =>
        flaky++ === 0
          ? { json: null }
          : { json: { type: "FeatureCollection", numberMatched: 0, features: [] } },
    });
  // The provider's smoke test through the real process (the others run the server in process).
  await using s = await openProvider({
    spawn: true,
    provider: "riksantikvaren_ogc",
    fake,
    settings: { timeout: 10, max_retries: 0, cache_ttl: 600, breaker_threshold: 50, deadline_margin_ms: 300 },
    env: { MCP_CALL_TIMEOUT: "1.5" },
  });

  try {
    await t.step(
      "riksantikvaren-features with a bbox lists only the features located in it and says what the upstream count includes",
      async () => {
        const r = await call(s, "riksantikvaren-features", {
          collection: "lokaliteter",
          bbox: RECORDED_BBOX,
          response_format: "json",
        });
        const st = ok(r);
        const fs = st["features"] as Json[];
        assert.deepEqual(fs.map((f) => f["id"]), ["140660-1", "140661-1", "140662-1", "140663-1"]);
        for (const f of fs) {
          const [lat, lon] = [f["lat"] as number, f["lon"] as number];
          assert.ok(
            lon >= 10.79 && lon <= 10.81 && lat >= 59.744 && lat <= 59.758,
            `${f["id"]} is in the box`,
          );
          assert.equal(f["municipality"], "Ås (3218)");
        }
        assert.deepEqual([st["total"], st["total_is_exact"], st["has_more"], st["next_cursor"]], [
          4,
          true,
          false,
          null,
        ]);
        assert.equal(st["upstream_matched"], 8094);
        const scan = st["scan"] as Json;
        assert.deepEqual(
          [scan["records_read"], scan["without_location"], scan["complete"], scan["stopped_because"]],
          [7, 3, true, "end"],
        );
        const md = texts(
          await call(s, "riksantikvaren-features", { collection: "lokaliteter", bbox: RECORDED_BBOX }),
        )[0]!;
        assert.match(md, /Features 1–4 of 4 located in bbox \[10\.79, 59\.744, 10\.81, 59\.758\]\./);
        assert.match(md, /api\.ra\.no's count for this bbox, 8,094, includes records without a location/);
        assert.doesNotMatch(md, /Location: none in the data/);
        assert.doesNotMatch(md, /Innerneset|Hystad|Sommerset/, "records from other counties are left out");
      },
    );

    await t.step(
      "riksantikvaren-features with a bbox fills a page across upstream pages and its cursor resumes exactly there",
      async () => {
        const args = { collection: "lokaliteter", bbox: RECORDED_BBOX, limit: 2, response_format: "json" };
        const before = fake.requestsTo(LOK).length;
        const first = ok(await call(s, "riksantikvaren-features", args));
        assert.deepEqual((first["features"] as Json[]).map((f) => f["id"]), ["140660-1", "140661-1"]);
        assert.deepEqual([first["total"], first["total_is_exact"], first["has_more"]], [4, false, true]);
        const sent = fake.requestsTo(LOK).slice(before).map((r) => {
          const q = r.url.searchParams;
          return `${q.get("offset")}/${q.get("limit")}`;
        });
        assert.deepEqual(
          sent,
          ["0/2", "2/1000"],
          "the first page has the caller's size, the next the service's",
        );
        assert.equal((first["scan"] as Json)["next_upstream_offset"], 5);

        const mid = fake.requestsTo(LOK).length;
        const second = ok(
          await call(s, "riksantikvaren-features", { cursor: first["next_cursor"], response_format: "json" }),
        );
        assert.deepEqual((second["features"] as Json[]).map((f) => f["id"]), ["140662-1", "140663-1"]);
        assert.equal(second["offset"], 2);
        const resumed = fake.requestsTo(LOK)[mid]!.url.searchParams;
        assert.deepEqual([resumed.get("offset"), resumed.get("limit"), resumed.get("bbox")], [
          "5",
          "2",
          "10.79,59.744,10.81,59.758",
        ]);

        const third = ok(
          await call(s, "riksantikvaren-features", {
            cursor: second["next_cursor"],
            response_format: "json",
          }),
        );
        assert.deepEqual([third["count"], third["total"], third["total_is_exact"], third["next_cursor"]], [
          0,
          4,
          true,
          null,
        ]);
        const md = texts(
          await call(s, "riksantikvaren-features", { ...args, response_format: "markdown" }),
        )[0]!;
        assert.match(md, /Features 1–2 of at least 4 located in bbox/);
        assert.match(md, /More: call again with cursor="ra1\.[^"]+" \(it resumes where this page stopped/);
      },
    );

    await t.step(
      "riksantikvaren-features with a bbox and an offset passes over the features before it",
      async () => {
        const r = ok(
          await call(s, "riksantikvaren-features", {
            collection: "lokaliteter",
            bbox: RECORDED_BBOX,
            offset: 3,
            response_format: "json",
          }),
        );
        assert.deepEqual((r["features"] as Json[]).map((f) => f["id"]), ["140663-1"]);
        assert.deepEqual([r["offset"], r["total"], r["has_more"]], [3, 4, false]);
      },
    );

    await t.step(
      "riksantikvaren-features answers the recorded empty bbox answer and hints at a swapped bbox",
      async () => {
        const empty = ok(
          await call(s, "riksantikvaren-features", {
            collection: "sikringssoner",
            bbox: RECORDED_BBOX,
            response_format: "json",
          }),
        );
        assert.deepEqual(
          [empty["count"], empty["total"], empty["total_is_exact"], empty["upstream_matched"]],
          [0, 0, true, 0],
        );
        assert.deepEqual(empty["warnings"], []);
        const swapped = await call(s, "riksantikvaren-features", {
          collection: "sikringssoner",
          bbox: [59.744, 10.79, 59.758, 10.81],
        });
        assert.match(texts(swapped)[0]!, /No features located in bbox \[59\.744, 10\.79, 59\.758, 10\.81\]/);
        assert.match(
          texts(swapped)[0]!,
          /Note: .*read as \[lat, lon\].*\[min_lon, min_lat, max_lon, max_lat\].*Did you mean \[10\.79, 59\.744, 10\.81, 59\.758\]\?/,
        );
      },
    );

    await t.step(
      "riksantikvaren-features lists the recorded name and CQL2 filter results without a bbox",
      async () => {
        const maria = ok(
          await call(s, "riksantikvaren-features", {
            collection: "lokaliteter",
            query: "Mariakirken",
            response_format: "json",
          }),
        );
        assert.deepEqual([maria["count"], maria["total"], maria["total_is_exact"], maria["scan"]], [
          7,
          7,
          true,
          null,
        ]);
        assert.ok(
          (maria["features"] as Json[]).some((f) =>
            f["id"] === "42178" && f["municipality"] === "Oslo - Oslove (0301)"
          ),
        );
        const sent = fake.requestsTo(LOK).at(-1)!.url.searchParams;
        assert.equal(sent.get("filter"), "CASEI(navn) LIKE CASEI('%Mariakirken%')");
        const nostvedt = await call(s, "riksantikvaren-features", {
          collection: "lokaliteter",
          query: "Nøstvedt",
          limit: 20,
        });
        assert.match(texts(nostvedt)[0]!, /Features 1–9 of 9 matching "Nøstvedt"/);
        // Without a bbox nothing is filtered: the record without a geometry is listed and says so.
        assert.match(texts(nostvedt)[0]!, /89251-1\n[^#]*Location: none in the data/);
      },
    );

    await t.step(
      "riksantikvaren-features shows the published label beside each code, and codes without a list as they are",
      async () => {
        const r = ok(
          await call(s, "riksantikvaren-features", {
            collection: "lokaliteter",
            query: "Nøstvedt",
            limit: 20,
            response_format: "json",
          }),
        );
        const byId = new Map((r["features"] as Json[]).map((f) => [f["id"], f]));
        const aut = byId.get("100418-1")!;
        assert.equal(aut["category"], "L-ARK (Arkeologisk lokalitet) – 20159", "lokalitetsart has no list");
        assert.equal(
          aut["protection"],
          "AUT (Automatisk fredet), KML (Kulturminnelova av 1978) § 4 (Automatisk fredning)",
        );
        assert.equal(aut["municipality"], "Ås (3218)");
        assert.equal(byId.get("89249")!["protection"], "UAV (Uavklart vernestatus)");
        assert.equal(
          byId.get("140660-1")!["protection"],
          "IKKEV",
          "not in the published list: the code alone",
        );
        const md = texts(
          await call(s, "riksantikvaren-features", { collection: "lokaliteter", query: "Nøstvedt" }),
        )[0]!;
        assert.match(md, /Ås \(3218\)/);
        assert.match(md, /UAV \(Uavklart vernestatus\)/);
        const freda = ok(
          await call(s, "riksantikvaren-features", {
            collection: "fredabygninger",
            bbox: [11.298, 59.998, 11.315, 60.01],
            response_format: "json",
          }),
        );
        const building = (freda["features"] as Json[]).find((f) => f["id"] === "1876987")!;
        assert.equal(building["dating"], "172 (1725-1749)");
        assert.equal(building["category"], "E-BYG (Bygning)");
      },
    );

    await t.step(
      "riksantikvaren-features and -feature give integer ids (fredabygninger) as text and take both",
      async () => {
        const r = ok(
          await call(s, "riksantikvaren-features", {
            collection: "fredabygninger",
            bbox: [11.298, 59.998, 11.315, 60.01],
            response_format: "json",
          }),
        );
        assert.equal(r["dataset"], "KulturminnerFredaBygninger");
        assert.deepEqual((r["features"] as Json[]).map((f) => f["id"]), ["1876987", "1877018", "1877181"]);
        assert.deepEqual([r["total"], r["total_is_exact"]], [3, true]);
        for (const id of [1876987, "1876987"]) {
          const one = ok(
            await call(s, "riksantikvaren-feature", {
              collection: "fredabygninger",
              id,
              response_format: "json",
            }),
          );
          const f = one["feature"] as Json;
          assert.equal(f["id"], "1876987");
          assert.equal(f["name"], "Artilleri og magasinbygning");
          assert.equal(f["geometry_type"], "Point");
        }
        assert.equal(
          fake.requestsTo(`${FREDA}/1876987`).length,
          1,
          "the number and the text are the same request (cached)",
        );
      },
    );

    await t.step("riksantikvaren-feature reads the recorded single feature with its string id", async () => {
      const r = ok(
        await call(s, "riksantikvaren-feature", {
          collection: "lokaliteter",
          id: "51949",
          response_format: "json",
        }),
      );
      const f = r["feature"] as Json;
      assert.deepEqual([f["id"], f["name"], f["municipality"]], [
        "51949",
        "Clemenskirken kirkested",
        "Oslo - Oslove (0301)",
      ]);
      assert.equal((f["geometry"] as Json)["type"], "MultiPolygon");
      const provenance = r["provenance"] as Json;
      assert.deepEqual(
        [provenance["permalink"], provenance["as_of"], provenance["licence"]],
        [
          "https://kulturminnesok.no/ra/lokalitet/51949",
          "record updated 2025-06-24T11:43:56Z",
          "NLOD 2.0 (Norwegian Licence for Open Government Data)",
        ],
        "the record's own page and last update",
      );
      assert.match(String(provenance["sha256"]), /^[0-9a-f]{64}$/);
    });

    await t.step("riksantikvaren-collections reads the recorded collections of three datasets", async () => {
      const expected: Record<string, string[]> = {
        [DS]: ["enkeltminner", "lokaliteter", "sikringssoner"],
        KulturminnerFredaBygninger: ["fredabygninger"],
        KulturminnerKulturmiljoer: ["kulturmiljoer"],
      };
      for (const [dataset, ids] of Object.entries(expected)) {
        const r = ok(await call(s, "riksantikvaren-collections", { dataset, response_format: "json" }));
        const cs = (r["datasets"] as Json[])[0]!["collections"] as Json[];
        assert.deepEqual(cs.map((c) => c["id"]), ids, dataset);
        assert.deepEqual(cs[0]!["bbox"], [-14.48, 55.59, 38.16, 84.84]);
        assert.deepEqual(cs[0]!["licence"], { name: "NLOD", url: "https://data.norge.no/nlod" });
      }
    });

    await t.step("riksantikvaren-nearby scans pages of 1000 and ranks only located records", async () => {
      const before = fake.requestsTo(LOK).length;
      const r = ok(
        await call(s, "riksantikvaren-nearby", { ...NOSTVEDT, radius_m: 300, response_format: "json" }),
      );
      const fs = r["features"] as Json[];
      assert.deepEqual(fs.map((f) => f["id"]).sort(), ["140660-1", "140661-1", "140662-1", "140663-1"]);
      const d = fs.map((f) => f["distance_m"] as number);
      assert.deepEqual(d, [...d].sort((x, y) => x - y), "nearest first");
      assert.deepEqual(
        [r["scanned"], r["without_location"], r["scan_complete"], r["next_cursor"], r["total_is_exact"]],
        [7, 3, true, null, true],
      );
      const limits = fake.requestsTo(LOK).slice(before).map((x) => x.url.searchParams.get("limit"));
      assert.deepEqual(limits, ["1000", "1000"]);
    });

    await t.step(
      "riksantikvaren-nearby hints at swapped lat and lon instead of searching the sea",
      async () => {
        const before = fake.requests.length;
        const r = ok(
          await call(s, "riksantikvaren-nearby", {
            lat: NOSTVEDT.lon,
            lon: NOSTVEDT.lat,
            response_format: "json",
          }),
        );
        assert.equal(r["count"], 0);
        assert.match(
          (r["warnings"] as string[]).join(" "),
          /lat 10\.798, lon 59\.75 lies outside Norway.*Did you mean lat 59\.75, lon 10\.798\?/,
        );
        assert.equal(fake.requests.length, before, "nothing was asked upstream");
      },
    );

    await t.step(
      "riksantikvaren-features answers before the call deadline with what it read and a cursor that resumes there",
      async () => {
        [hold, holdFrom] = [Promise.withResolvers<void>(), 1];
        const bbox = [10.79, 59.744, 10.81, 59.759];
        const r = await call(s, "riksantikvaren-features", {
          collection: "lokaliteter",
          bbox,
          response_format: "json",
        });
        const st = ok(r);
        assert.deepEqual((st["features"] as Json[]).map((f) => f["id"]), [
          "140660-1",
          "140661-1",
          "140662-1",
          "140663-1",
        ]);
        assert.deepEqual([st["total"], st["total_is_exact"], st["has_more"]], [5, false, true]);
        assert.equal((st["scan"] as Json)["stopped_because"], "deadline");
        assert.match(
          (st["warnings"] as string[]).join(" "),
          /time limit for one call; the cursor resumes at the next record/,
        );
        release();
        const next = ok(
          await call(s, "riksantikvaren-features", { cursor: st["next_cursor"], response_format: "json" }),
        );
        assert.equal(
          fake.requestsTo(LOK).at(-1)!.url.searchParams.get("offset"),
          "7",
          "resumed at the record it stopped at",
        );
        assert.deepEqual([next["offset"], next["count"], next["total"], next["total_is_exact"]], [
          4,
          0,
          4,
          true,
        ]);
      },
    );

    await t.step(
      "riksantikvaren-nearby answers a partial ranking before the deadline and its cursor completes it",
      async () => {
        [hold, holdFrom] = [Promise.withResolvers<void>(), 1];
        const args = { ...NOSTVEDT, radius_m: 250, response_format: "json" };
        const first = ok(await call(s, "riksantikvaren-nearby", args));
        assert.deepEqual([first["scan_complete"], first["total_is_exact"], first["scanned"]], [
          false,
          false,
          7,
        ]);
        assert.match(
          (first["warnings"] as string[]).join(" "),
          /before the server's time limit for one call/,
        );
        const ranked = (first["features"] as Json[]).map((f) => [f["id"], f["distance_m"]]);
        assert.equal(ranked.length, 4);
        release();
        const done = ok(await call(s, "riksantikvaren-nearby", { ...args, cursor: first["next_cursor"] }));
        assert.deepEqual([done["scan_complete"], done["scanned"], done["next_cursor"]], [true, 7, null]);
        const fs = done["features"] as Json[];
        assert.deepEqual(fs.map((f) => [f["id"], f["distance_m"]]), ranked, "the carried ranking is whole");
        assert.ok(
          fs.every((f) => f["name"] === "Nøstvedt"),
          "details of carried features were fetched again",
        );
        const moved = await call(s, "riksantikvaren-nearby", {
          ...args,
          lat: 59.8,
          cursor: first["next_cursor"],
        });
        assert.equal(errorOf(moved)["field"], "cursor");
      },
    );

    await t.step(
      "riksantikvaren-collections names the dataset that did not answer in time and lists the others",
      async () => {
        [hold, holdFrom, catalogOk] = [Promise.withResolvers<void>(), 0, true];
        const r = ok(await call(s, "riksantikvaren-collections", { response_format: "json" }));
        const [lok, slow] = r["datasets"] as Json[];
        assert.deepEqual((lok!["collections"] as Json[]).map((c) => c["id"]), [
          "enkeltminner",
          "lokaliteter",
          "sikringssoner",
        ]);
        assert.equal(slow!["collections"], null);
        assert.match(String(slow!["error"]), /Not read: .*ran short of time; call again with dataset "Slow"/);
        catalogOk = false;
        release();
      },
    );

    await t.step(
      "riksantikvaren-features answers a structured TIMEOUT when not even the first page comes",
      async () => {
        [hold, holdFrom] = [Promise.withResolvers<void>(), 0];
        const r = await call(s, "riksantikvaren-features", {
          collection: "enkeltminner",
          bbox: RECORDED_BBOX,
        });
        const e = errorOf(r);
        assert.equal(e["error_type"], "TIMEOUT");
        assert.equal(e["retryable"], true);
        release();
      },
    );

    await t.step("the riksantikvaren-* tools answer DECODE_ERROR for bodies of the wrong shape", async () => {
      const cases: [string, Json, RegExp][] = [
        [
          "riksantikvaren-collections",
          { fresh: true }, // an earlier step's good catalog is in the cache
          /dataset catalog: it sent an object whose "apis" is a string/,
        ],
        ["riksantikvaren-collections", { dataset: "Garbage" }, /list of collections: it sent null/],
        ["riksantikvaren-collections", { dataset: "Garbage2" }, /it sent an array/],
        [
          "riksantikvaren-features",
          { dataset: "Garbage", collection: "arr" },
          /feature collection: it sent an array/,
        ],
        ["riksantikvaren-features", { dataset: "Garbage", collection: "wrong" }, /"features" is a string/],
        [
          "riksantikvaren-features",
          { dataset: "Garbage", collection: "nulls", bbox: RECORDED_BBOX },
          /feature 1 is null/,
        ],
        ["riksantikvaren-nearby", { dataset: "Garbage", collection: "arr", ...NOSTVEDT }, /it sent an array/],
        [
          "riksantikvaren-feature",
          { dataset: "Garbage", collection: "arr", id: "1" },
          /feature for id "1": it sent an array/,
        ],
        ["riksantikvaren-feature", { dataset: "Garbage", collection: "arr", id: "2" }, /it sent null/],
      ];
      for (const [tool, args, message] of cases) {
        const r = await call(s, tool, args);
        const e = errorOf(r);
        assert.equal(e["error_type"], "DECODE_ERROR", `${tool} ${JSON.stringify(args)}`);
        assert.match(String(e["message"]), message);
        assert.doesNotMatch(texts(r)[0]!, /No features/);
      }
    });

    await t.step("a body of the wrong shape is not cached: the next call asks again", async () => {
      const args = { dataset: "Garbage", collection: "flaky", response_format: "json" };
      assert.equal(errorOf(await call(s, "riksantikvaren-features", args))["error_type"], "DECODE_ERROR");
      const again = ok(await call(s, "riksantikvaren-features", args));
      assert.deepEqual([again["count"], again["total"]], [0, 0]);
      assert.equal(flaky, 2);
    });
  } finally {
    release();
  }
});
