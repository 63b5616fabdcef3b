import assert from "node:assert/strict";
import { parseCsv } from "../../../lib/providers/boj/csv.ts";

Deno.test("parseCsv() splits plain rows on LF and CRLF and drops blank lines", () => {
  assert.deepEqual(parseCsv("A,B\r\nC,D\n\nE,\n"), [["A", "B"], ["C", "D"], ["E", ""]]);
});

Deno.test("parseCsv() keeps commas, doubled quotes and line breaks inside quoted cells", () => {
  const rows = parseCsv('X,"Call Rate, Overnight","say ""hi""","two\nlines"\nlast,1');
  assert.deepEqual(rows, [["X", "Call Rate, Overnight", 'say "hi"', "two\nlines"], ["last", "1"]]);
});

Deno.test("parseCsv() reads a last row without a line end and an empty leading cell", () => {
  assert.deepEqual(parseCsv(",Heading,1\nNEXTPOSITION,"), [["", "Heading", "1"], ["NEXTPOSITION", ""]]);
});
