import assert from "node:assert/strict";
import { ToolError } from "../../../lib/errors.ts";
import {
  normalizeDb,
  validateCodes,
  validateDate,
  validateLayers,
  validateRange,
} from "../../../lib/providers/boj/validate.ts";

function fails(fn: () => unknown, field: string, pattern: RegExp, hint?: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ToolError, "a ToolError");
    assert.equal(e.errorType, "VALIDATION_ERROR");
    assert.equal(e.retryable, false);
    assert.equal(e.field, field);
    assert.match(e.message, pattern);
    if (hint) assert.match(e.hint ?? "", hint);
    return true;
  });
}

Deno.test("normalizeDb() upper-cases a code and refuses empty, listed and full-width values", () => {
  assert.equal(normalizeDb(" fm08 "), "FM08");
  fails(() => normalizeDb("  "), "db", /empty/, /boj_list_databases/);
  fails(() => normalizeDb("FM01,FM02"), "db", /one database code/);
  fails(() => normalizeDb("ＦＭ０８"), "db", /full-width/);
});

Deno.test("validateCodes() refuses a database-prefixed code and says which parts go where", () => {
  fails(
    () => validateCodes(["FM08'FXERD01"], "FM08"),
    "codes",
    /database prefix \("FM08"\)/,
    /Pass "FXERD01" in codes/,
  );
  fails(() => validateCodes(["IR01’MADR1Z@D"], "FM08"), "codes", /database prefix/, /"IR01" as db/);
});

Deno.test("validateCodes() refuses comma lists, blanks, forbidden and non-ASCII characters", () => {
  fails(() => validateCodes(["A,B"], "CO"), "codes", /several codes/, /\["A","B"\]/);
  fails(() => validateCodes(["A", " "], "CO"), "codes", /Series code 2 is empty/);
  fails(() => validateCodes(["A<B"], "CO"), "codes", /refuses/);
  fails(() => validateCodes(["ＡＢＣ"], "CO"), "codes", /non-ASCII/);
  fails(() => validateCodes(["A B"], "CO"), "codes", /white space/);
  fails(() => validateCodes([], "CO"), "codes", /empty/);
});

Deno.test("validateCodes() refuses more than 1,250 codes and accepts 1,250", () => {
  const many = Array.from({ length: 1250 }, (_, i) => `C${i}`);
  assert.equal(validateCodes(many, "CO").length, 1250);
  fails(() => validateCodes([...many, "X"], "CO"), "codes", /1251 codes.*at most 1250/);
});

Deno.test("validateCodes() trims and keeps codes with @ and _", () => {
  assert.deepEqual(validateCodes([" MADR1Z@D ", "PRCG20_2200000000"], "IR01"), [
    "MADR1Z@D",
    "PRCG20_2200000000",
  ]);
});

Deno.test("validateLayers() takes 1 to 5 levels of positive integers or *", () => {
  assert.deepEqual(validateLayers(["1", " * ", "3"]), ["1", "*", "3"]);
  fails(() => validateLayers([]), "layers", /1 to 5 levels, got 0/);
  fails(() => validateLayers(["1", "1", "1", "1", "1", "1"]), "layers", /got 6/);
  fails(() => validateLayers(["0"]), "layers", /Layer 1 is "0"/);
  fails(() => validateLayers(["1", "a"]), "layers", /Layer 2 is "a"/);
});

Deno.test("validateDate() without a frequency takes YYYY or YYYYXX within 1850 to 2050", () => {
  assert.equal(validateDate("2024", "start_date"), "2024");
  assert.equal(validateDate("202412", "start_date"), "202412");
  fails(() => validateDate("2024-01", "start_date"), "start_date", /YYYY, YYYYHH, YYYYQQ or YYYYMM/);
  fails(() => validateDate("20240101", "end_date"), "end_date", /"end_date" is "20240101"/);
  fails(() => validateDate("1849", "start_date"), "start_date", /1850 to 2050/);
  fails(() => validateDate("202413", "start_date"), "start_date", /01 to 12/);
});

Deno.test("validateDate() with a frequency checks the shape that frequency takes", () => {
  assert.equal(validateDate("2024", "start_date", "CY"), "2024");
  assert.equal(validateDate("202402", "start_date", "FH"), "202402");
  assert.equal(validateDate("202404", "start_date", "Q"), "202404");
  assert.equal(validateDate("202412", "start_date", "D"), "202412");
  fails(() => validateDate("202401", "start_date", "FY"), "start_date", /frequency FY.*YYYY/);
  fails(() => validateDate("2024", "start_date", "Q"), "start_date", /frequency Q.*YYYYQQ/);
  fails(() => validateDate("202405", "start_date", "Q"), "start_date", /01 to 04/, /YYYYQQ/);
  fails(() => validateDate("202403", "end_date", "CH"), "end_date", /01 to 02/);
});

Deno.test("validateRange() wants both ends in one format and in order", () => {
  validateRange("202401", "202401");
  validateRange("2024", undefined);
  fails(() => validateRange("2024", "202401"), "end_date", /different formats/);
  fails(() => validateRange("202402", "202401"), "end_date", /is after/, /Swap them/);
});
