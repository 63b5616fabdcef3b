import assert from "node:assert/strict";
import { DATABASES, findDatabase, findMessage, MESSAGES } from "../../../lib/providers/boj/catalog.ts";
import {
  databasesPayload,
  messageCatalogPayload,
  parameterCatalogPayload,
} from "../../../lib/providers/boj/catalog_view.ts";
import { completeValues } from "../../../lib/providers/boj/discovery.ts";
import { normalizeFormat, normalizeLang } from "../../../lib/providers/boj/tools.ts";

Deno.test("DATABASES holds the manual's 50 unique codes with both names", () => {
  assert.equal(DATABASES.length, 50);
  assert.equal(new Set(DATABASES.map((d) => d.code)).size, 50);
  for (const d of DATABASES) assert.ok(d.name_en && d.name_ja && d.category_en, d.code);
  assert.equal(findDatabase("fm08")?.name_ja, "外国為替市況");
});

Deno.test("MESSAGES holds the 24 rows of appendix B with a hint each", () => {
  assert.equal(MESSAGES.length, 24);
  for (const m of MESSAGES) assert.ok(m.hint && m.message_en, m.message_id);
  assert.equal(findMessage("m181005e")?.status, 400);
});

Deno.test("parameterCatalogPayload() gives BOJ and MCP notation and scopes rows to the endpoint", () => {
  const all = parameterCatalogPayload("all");
  assert.deepEqual(all.format_codes, ["JSON", "CSV"]);
  assert.deepEqual(all.language_codes, ["JP", "EN"]);
  assert.deepEqual(all.mcp_format_codes, ["json", "csv"]);
  assert.deepEqual(all.mcp_language_codes, ["jp", "en"]);
  assert.equal(all.parameters.length, 9);
  assert.equal(all.source_date, "2026-02-18");
  const meta = parameterCatalogPayload("get_metadata");
  assert.equal(meta.endpoint_scope, "getMetadata");
  assert.deepEqual(meta.parameters.map((p) => p.name), ["FORMAT", "LANG", "DB"]);
  assert.deepEqual(meta.limits, []);
  assert.deepEqual(meta.layer_rules, []);
  const layer = parameterCatalogPayload("get_data_layer");
  assert.ok(layer.parameters.some((p) => p.name === "FREQUENCY" && p.requirements.layer_api === "required"));
  assert.ok(!layer.parameters.some((p) => p.name === "CODE"));
  assert.ok(layer.limits.some((l) => l.max_value === 1250 && l.api_scope === "getDataLayer"));
  assert.ok(layer.layer_rules.length > 0);
});

Deno.test("messageCatalogPayload() filters by status and message id and marks 500/503 retryable", () => {
  assert.equal(messageCatalogPayload().count, 24);
  const s400 = messageCatalogPayload(400);
  assert.equal(s400.count, 20);
  assert.ok(s400.messages.every((m) => m.status === 400 && !m.retryable));
  assert.deepEqual(messageCatalogPayload(503).messages.map((m) => [m.message_id, m.retryable]), [[
    "M181091S",
    true,
  ]]);
  const one = messageCatalogPayload(undefined, "m181018e");
  assert.equal(one.message_id_filter, "M181018E");
  assert.equal(one.messages[0]!.message_en, "Invalid frequency");
  assert.equal(messageCatalogPayload(404).count, 0);
});

Deno.test("databasesPayload() carries its source document and date", () => {
  const p = databasesPayload();
  assert.equal(p.count, 50);
  assert.match(p.source_document, /api_manual\.pdf/);
  assert.equal(p.source_date, "2026-02-18");
});

Deno.test("completeValues() completes each name by case-insensitive prefix", () => {
  assert.deepEqual(completeValues("db", "fm0").slice(0, 3), ["FM01", "FM02", "FM03"]);
  assert.equal(completeValues("db", "").length, 50);
  assert.deepEqual(completeValues("format", "C"), ["csv"]);
  assert.deepEqual(completeValues("lang", "e"), ["en"]);
  assert.deepEqual(completeValues("endpoint", "get_data"), ["get_data_code", "get_data_layer"]);
  assert.deepEqual(completeValues("status", "5"), ["500", "503"]);
  assert.deepEqual(completeValues("frequency", "f"), ["FY", "FH"]);
  assert.deepEqual(completeValues("db", "zz"), []);
});

Deno.test("normalizeFormat() and normalizeLang() map the aliases to BOJ notation", () => {
  assert.equal(normalizeFormat("csv"), "CSV");
  assert.equal(normalizeFormat("CSV"), "CSV");
  assert.equal(normalizeFormat(undefined), "JSON");
  assert.equal(normalizeLang("en"), "EN");
  assert.equal(normalizeLang("JP"), "JP");
  assert.equal(normalizeLang(undefined), undefined);
});
