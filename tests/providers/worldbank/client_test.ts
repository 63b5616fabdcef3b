import assert from "node:assert/strict";
import { buildQuery, DETAIL_FIELDS, SUMMARY_FIELDS } from "../../../lib/providers/worldbank/client.ts";

const TODAY = { today: "2026-05-01" };

Deno.test("buildQuery() maps every search argument to its WDS parameter", () => {
  const q = buildQuery(
    {
      query: "climate adaptation",
      countries: ["Kenya", "Tanzania"],
      document_types: ["Report", "Brief"],
      languages: ["English", "French"],
      date_from: "2018-01-01",
      date_to: "2018-03-30",
      sort_by: "docdt",
      sort_order: "asc",
    },
    { rows: 20, offset: 40, fields: ["id", "docdt"] },
    TODAY,
  );
  assert.deepEqual(q, {
    format: "json",
    qterm: "climate adaptation",
    count_exact: "Kenya^Tanzania",
    docty_exact: "Report^Brief",
    lang_exact: "English^French",
    strdate: "2018-01-01",
    enddate: "2018-03-30",
    srt: "docdt",
    order: "asc",
    rows: 20,
    os: 40,
    fl: "id,docdt",
  });
});

Deno.test("buildQuery() sends an end date with a lone start date", () => {
  assert.equal(buildQuery({ date_from: "2020-01-01" }, { rows: 1 }, TODAY)["enddate"], "2026-05-01");
  assert.equal(
    buildQuery({ date_from: "2030-01-01" }, { rows: 1 }, TODAY)["enddate"],
    "2030-01-01",
    "a start date after today is its own end date",
  );
  const endOnly = buildQuery({ date_to: "2001-12-31" }, { rows: 1 }, TODAY);
  assert.equal(endOnly["enddate"], "2001-12-31");
  assert.equal(endOnly["strdate"], undefined);
});

Deno.test("buildQuery() leaves sorting to the upstream for relevance and defaults the order to desc", () => {
  const relevance = buildQuery({ query: "x", sort_by: "relevance", sort_order: "asc" }, { rows: 5 }, TODAY);
  assert.equal(relevance["srt"], undefined);
  assert.equal(relevance["order"], undefined);
  assert.equal(buildQuery({ sort_by: "repnb" }, { rows: 5 }, TODAY)["order"], "desc");
});

Deno.test("buildQuery() asks for facets with fct and leaves out empty filters", () => {
  const q = buildQuery(
    { countries: [], query: "" },
    { rows: 0, facets: ["lang_exact", "count_exact"] },
    TODAY,
  );
  assert.deepEqual(q, { format: "json", rows: 0, os: 0, fct: "lang_exact,count_exact" });
});

Deno.test("buildQuery() sends the project id as projectid", () => {
  assert.equal(buildQuery({ project_id: "P123365" }, { rows: 1 }, TODAY)["projectid"], "P123365");
});

Deno.test("DETAIL_FIELDS ask for authors as authr and include every summary field", () => {
  assert.ok((DETAIL_FIELDS as readonly string[]).includes("authr"));
  assert.ok(!(DETAIL_FIELDS as readonly string[]).includes("authors"));
  for (const f of SUMMARY_FIELDS) assert.ok((DETAIL_FIELDS as readonly string[]).includes(f), f);
});
