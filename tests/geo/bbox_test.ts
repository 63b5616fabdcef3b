import assert from "node:assert/strict";
import { bboxAround, bboxProblem, bboxSizeKm, formatBbox } from "../../lib/geo/bbox.ts";
import type { Bbox } from "../../lib/geo/bbox.ts";
import { haversineM } from "../../lib/geo/distance.ts";

Deno.test("bboxProblem() accepts a valid [min_lon, min_lat, max_lon, max_lat] box", () => {
  assert.equal(bboxProblem([10.70, 59.90, 10.80, 59.95]), undefined);
  assert.equal(bboxProblem([-180, -90, 180, 90]), undefined);
});

Deno.test("bboxProblem() names the wrong count, non-finite values and out-of-range values", () => {
  assert.match(bboxProblem([1, 2, 3]) ?? "", /expected 4 numbers/);
  assert.match(bboxProblem([1, 2, 3, NaN]) ?? "", /finite/);
  assert.match(bboxProblem([10, 59, 190, 60]) ?? "", /max_lon 190 is outside \[-180, 180\]/);
  assert.match(
    bboxProblem([59.9, 10.7, 59.95, 95]) ?? "",
    /max_lat 95 is outside \[-90, 90\].*longitude first/,
  );
});

Deno.test("bboxProblem() refuses reversed order and zero-size boxes", () => {
  assert.match(bboxProblem([10.8, 59.9, 10.7, 59.95]) ?? "", /min_lon 10\.8 must be less than max_lon 10\.7/);
  assert.match(
    bboxProblem([10.7, 59.95, 10.8, 59.9]) ?? "",
    /min_lat 59\.95 must be less than max_lat 59\.9/,
  );
  assert.match(bboxProblem([10.7, 59.9, 10.7, 59.95]) ?? "", /must be less than/);
});

Deno.test("bboxProblem() enforces the size cap in kilometres", () => {
  assert.equal(bboxProblem([10.0, 59.0, 11.0, 60.0], { maxSideKm: 200 }), undefined);
  assert.match(
    bboxProblem([4.0, 58.0, 31.0, 71.0], { maxSideKm: 200 }) ?? "",
    /longest side may be at most 200 km/,
  );
});

Deno.test("bboxProblem() measures the width the long way round, so a box spanning the globe is not small", () => {
  // As a great circle, lon -179.5 to 179.5 is 1° apart; the box itself spans 359° of longitude.
  assert.match(bboxProblem([-179.5, 0, 179.5, 1], { maxSideKm: 200 }) ?? "", /39\d{3} km × 111 km/);
  assert.match(bboxProblem([-180, 59, 180, 60], { maxSideKm: 200 }) ?? "", /at most 200 km/);
  assert.match(bboxProblem([5, 89, 175, 89.5], { maxSideKm: 200 }) ?? "", /at most 200 km/);
  const { widthKm } = bboxSizeKm([-179.5, 0, 179.5, 1]);
  assert.ok(Math.abs(widthKm - 39_918) < 10, `width ${widthKm}`);
});

Deno.test("bboxSizeKm() measures a one-degree box at 60°N as about 55.6 km by 111.2 km", () => {
  const { widthKm, heightKm } = bboxSizeKm([10, 59.5, 11, 60.5]);
  assert.ok(Math.abs(widthKm - 55.6) < 0.5, `width ${widthKm}`);
  assert.ok(Math.abs(heightKm - 111.2) < 0.5, `height ${heightKm}`);
});

Deno.test("bboxAround() holds every point of the circle and is tight on each side", () => {
  const center = { lat: 59.9075, lon: 10.7637 };
  const r = 1000;
  const [minLon, minLat, maxLon, maxLat] = bboxAround(center, r);
  assert.ok(Math.abs(haversineM(center, { lat: maxLat, lon: center.lon }) - r) < 0.5);
  assert.ok(Math.abs(haversineM(center, { lat: minLat, lon: center.lon }) - r) < 0.5);
  // The widest point of the circle is slightly poleward of the center's latitude.
  for (let bearing = 0; bearing < 360; bearing += 5) {
    const p = destination(center, r, bearing);
    assert.ok(
      p.lon >= minLon - 1e-9 && p.lon <= maxLon + 1e-9 && p.lat >= minLat - 1e-9 && p.lat <= maxLat + 1e-9,
    );
  }
  assert.ok(
    maxLon - center.lon < 0.0181 && maxLon - center.lon > 0.0179,
    `half width ${maxLon - center.lon}`,
  );
});

Deno.test("bboxAround() widens to all longitudes near a pole", () => {
  assert.deepEqual(bboxAround({ lat: 89.999, lon: 20 }, 5000).filter((_, i) => i % 2 === 0), [-180, 180]);
});

Deno.test("formatBbox() rounds for display", () => {
  assert.equal(formatBbox([10.123456789, 59.1, 10.2, 59.2] as Bbox), "[10.12346, 59.1, 10.2, 59.2]");
});

function destination(
  p: { lat: number; lon: number },
  d: number,
  bearingDeg: number,
): { lat: number; lon: number } {
  const R = 6_371_008.8;
  const rad = Math.PI / 180;
  const [lat1, lon1, b, a] = [p.lat * rad, p.lon * rad, bearingDeg * rad, d / R];
  const lat2 = Math.asin(Math.sin(lat1) * Math.cos(a) + Math.cos(lat1) * Math.sin(a) * Math.cos(b));
  const lon2 = lon1 +
    Math.atan2(Math.sin(b) * Math.sin(a) * Math.cos(lat1), Math.cos(a) - Math.sin(lat1) * Math.sin(lat2));
  return { lat: lat2 / rad, lon: lon2 / rad };
}
