import assert from "node:assert/strict";
import {
  NORWAY_EXTENT,
  swappedBbox,
  swappedBboxHint,
  swappedPoint,
  swappedPointHint,
  swappedRingHint,
} from "../../lib/geo/swap.ts";

Deno.test("swappedPoint() finds a lat/lon pair given the other way round and stays quiet otherwise", () => {
  assert.deepEqual(swappedPoint({ lat: 10.7637, lon: 59.9075 }), { lat: 59.9075, lon: 10.7637 });
  assert.equal(swappedPoint({ lat: 59.9075, lon: 10.7637 }), undefined, "Oslo as given");
  assert.equal(swappedPoint({ lat: 78.22, lon: 15.65 }), undefined, "Longyearbyen as given");
  assert.deepEqual(swappedPoint({ lat: 15.65, lon: 78.22 }), { lat: 78.22, lon: 15.65 });
  assert.equal(swappedPoint({ lat: 40.7, lon: -74 }), undefined, "New York: outside either way");
});

Deno.test("swappedPointHint() names the tool's fields, the order and the swapped value", () => {
  const hint = swappedPointHint({ lat: 10.7637, lon: 59.9075 }, { lat: "point.lat", lon: "point.lon" }) ?? "";
  assert.match(hint, /point\.lat 10\.7637, point\.lon 59\.9075 lies outside Norway/);
  assert.match(hint, /point\.lat is the latitude/);
  assert.match(hint, /Did you mean point\.lat 59\.9075, point\.lon 10\.7637\?/);
  assert.equal(swappedPointHint({ lat: 59.9, lon: 10.7 }), undefined);
});

Deno.test("swappedBboxHint() spots a [lat, lon] box for Norway and stays quiet otherwise", () => {
  assert.deepEqual(swappedBbox([59.9, 10.7, 59.95, 10.8]), [10.7, 59.9, 10.8, 59.95]);
  assert.match(
    swappedBboxHint([59.9, 10.7, 59.95, 10.8]) ?? "",
    /read as \[lat, lon\].*\[min_lon, min_lat, max_lon, max_lat\].*Did you mean \[10\.7, 59\.9, 10\.8, 59\.95\]\?/,
  );
  assert.equal(swappedBboxHint([10.7, 59.9, 10.8, 59.95]), undefined);
  assert.equal(swappedBboxHint([-75, 40, -73, 41]), undefined);
});

Deno.test("swappedRingHint() needs every [lon, lat] position to look swapped", () => {
  const swapped: [number, number][] = [[59.90, 10.70], [59.90, 10.80], [59.95, 10.80]];
  assert.match(
    swappedRingHint(swapped) ?? "",
    /positions are \[lon, lat\].*\[10\.7, 59\.9\] for the first one/,
  );
  assert.equal(swappedRingHint(swapped.map(([a, b]) => [b, a] as [number, number])), undefined);
  assert.equal(swappedRingHint([[59.9, 10.7], [10.7, 59.9], [59.95, 10.8]]), undefined, "mixed ring");
  assert.equal(swappedRingHint([]), undefined);
});

Deno.test("NORWAY_EXTENT has no point inside it in both readings", () => {
  const [minLon, minLat, maxLon, maxLat] = NORWAY_EXTENT;
  // Both readings inside would need a value in both [minLat, maxLat] and [minLon, maxLon].
  assert.ok(minLat > maxLon || minLon > maxLat);
});
