import assert from "node:assert/strict";
import { ToolError } from "../../lib/errors.ts";
import {
  checkFilename,
  checkProjectName,
  checkRelativePath,
  renderFilenamePattern,
  sanitizeName,
  stamp,
} from "../../lib/output/paths.ts";

function refused(fn: () => unknown, field: string, pattern?: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ToolError);
    assert.equal(e.errorType, "PATH_SECURITY_ERROR");
    assert.equal(e.field, field);
    if (pattern) assert.match(e.message, pattern);
    return true;
  });
}

Deno.test("checkProjectName() accepts plain names", () => {
  for (const name of ["default", "inflation-study", "A_1", "x", "a".repeat(64)]) {
    assert.equal(checkProjectName(name), name);
  }
});

Deno.test("checkProjectName() refuses traversal, separators, reserved names and odd characters", () => {
  refused(() => checkProjectName(""), "project", /empty/);
  refused(() => checkProjectName(".."), "project", /"\.\."/);
  refused(() => checkProjectName("../etc"), "project", /"\.\."/);
  refused(() => checkProjectName("a/b"), "project", /separator/);
  refused(() => checkProjectName("a\\b"), "project", /separator/);
  refused(() => checkProjectName("/abs"), "project", /separator/);
  refused(() => checkProjectName("CON"), "project", /reserved/);
  refused(() => checkProjectName("lpt1"), "project", /reserved/);
  refused(() => checkProjectName("a b"), "project");
  refused(() => checkProjectName("a<b"), "project", /"<"/);
  refused(() => checkProjectName("a\u0000b"), "project");
  refused(() => checkProjectName("-lead"), "project");
  refused(() => checkProjectName(".hidden"), "project");
  refused(() => checkProjectName("a".repeat(65)), "project");
  refused(() => checkProjectName("../x", "project_name"), "project_name");
});

Deno.test("checkFilename() adds the format's extension and refuses another", () => {
  assert.equal(checkFilename("gdp", "csv"), "gdp.csv");
  assert.equal(checkFilename("gdp.csv", "csv"), "gdp.csv");
  assert.equal(checkFilename("GDP.CSV", "csv"), "GDP.csv", "the extension is normalised to lower case");
  assert.equal(checkFilename("gdp_2020-q1", "json"), "gdp_2020-q1.json");
  refused(() => checkFilename("gdp.json", "csv"), "filename", /ends in "\.json"/);
  refused(() => checkFilename("gdp.txt", "csv"), "filename");
});

Deno.test("checkFilename() refuses traversal, hidden and reserved names", () => {
  for (
    const name of [
      "../gdp",
      "..",
      "a..b",
      "sub/gdp",
      "c:\\gdp",
      ".hidden",
      "CON.csv",
      "nul",
      "aux.json",
      "gdp.",
      "g d p",
      "g|p",
      "g?p",
      "g*p",
      'g"p',
      "g:p",
    ]
  ) {
    refused(() => checkFilename(name, "csv"), "filename");
  }
  refused(() => checkFilename("x".repeat(129), "csv"), "filename");
});

Deno.test("checkRelativePath() allows listed paths and refuses escapes", () => {
  assert.deepEqual(checkRelativePath("series/GNPCA_observations.csv"), ["series", "GNPCA_observations.csv"]);
  assert.deepEqual(checkRelativePath("file.json"), ["file.json"]);
  for (
    const path of [
      "../x.csv",
      "series/../../x.csv",
      "series/.project.json",
      ".project.json",
      "a/b/c.csv",
      "",
      "series/",
      "/etc/passwd",
      "series//x.csv",
    ]
  ) {
    refused(() => checkRelativePath(path), "path");
  }
});

Deno.test("sanitizeName() keeps letters, digits, '-' and '_' only", () => {
  assert.equal(sanitizeName("../../etc/passwd"), "etc_passwd");
  assert.equal(sanitizeName("gross national product"), "gross_national_product");
  assert.equal(sanitizeName("usa;gdp"), "usa_gdp");
  assert.equal(sanitizeName("___"), "");
  assert.equal(sanitizeName("a".repeat(100), 10), "a".repeat(10));
});

Deno.test("renderFilenamePattern() fills variables, drops missing ones and never returns a bad name", () => {
  const vars = { series_id: "GNPCA", operation: "observations", date: "20251008", time: "143022" };
  assert.equal(
    renderFilenamePattern("{series_id}_{operation}_{date}_{time}", vars),
    "GNPCA_observations_20251008_143022",
  );
  assert.equal(
    renderFilenamePattern("{series_id}_{operation}_{date}", { operation: "search", date: "20251008" }),
    "search_20251008",
  );
  assert.equal(renderFilenamePattern("{series_id}", { series_id: "../../x" }), "x");
  assert.equal(renderFilenamePattern("{nothing}", { timestamp: "20251008143022" }), "data_20251008143022");
  assert.equal(renderFilenamePattern("CON", {}), "data_file");
});

Deno.test("stamp() gives UTC date and time parts", () => {
  assert.deepEqual(stamp(Date.UTC(2025, 9, 8, 14, 30, 22)), { date: "20251008", time: "143022" });
});
