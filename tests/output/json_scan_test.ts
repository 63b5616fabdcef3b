import assert from "node:assert/strict";
import { JsonScanError, scanJsonList } from "../../lib/output/json_scan.ts";
import { fixtureBytes } from "../fakes/upstream.ts";

const enc = (text: string): Uint8Array => new TextEncoder().encode(text);

Deno.test("scanJsonList() hands over the recorded observations in batches and parses the other fields", async () => {
  const body = fixtureBytes("fred/official_doc_series_observations_GNPCA.json");
  const batches: unknown[][] = [];
  const scanned = await scanJsonList(body, "observations", (b) => {
    batches.push(b);
  }, { batchSize: 30 });
  assert.deepEqual(batches.map((b) => b.length), [30, 30, 24]);
  const whole = JSON.parse(new TextDecoder().decode(body));
  assert.deepEqual(batches.flat(), whole.observations);
  const { observations: _, ...fields } = whole;
  assert.deepEqual(scanned.fields, fields);
  assert.equal(scanned.items, 84);
  assert.equal(scanned.found, true);
});

Deno.test("scanJsonList() reads strings with escapes, nested values, plain lists and empty lists", async () => {
  const items: unknown[] = [];
  const scanned = await scanJsonList(
    enc(
      ' { "a" : "x\\"}]," , "list": [ "1958-12-21" , {"n": [1, {"m": "]"}]}, null, 2.5e3 ], "z": {"k": [true]} } ',
    ),
    "list",
    (b) => {
      items.push(...b);
    },
    { batchSize: 2 },
  );
  assert.deepEqual(items, ["1958-12-21", { n: [1, { m: "]" }] }, null, 2500]);
  assert.deepEqual(scanned.fields, { a: 'x"}],', z: { k: [true] } });
  const empty = await scanJsonList(enc('{"list": [], "count": 0}'), "list", () => assert.fail("no batch"));
  assert.deepEqual(empty, { fields: { count: 0 }, items: 0, found: true });
  const absent = await scanJsonList(enc('{"error_message": "Bad"}'), "list", () => assert.fail("no batch"));
  assert.equal(absent.found, false);
});

Deno.test("scanJsonList() refuses bodies that are not a JSON object", async () => {
  for (const text of ["<html>", "[1,2]", '{"list": [1, 2', '{"list": [1 2]}', '{"a": "open', ""]) {
    await assert.rejects(scanJsonList(enc(text), "list", () => {}), JsonScanError, text);
  }
});
