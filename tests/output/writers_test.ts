import assert from "node:assert/strict";
import { csvCell, csvLine, flattenRow, mimeTypeOf, openRowWriter } from "../../lib/output/row_writers.ts";

function paths(): { path: string; tempPath: string } {
  const dir = Deno.makeTempDirSync();
  return { path: `${dir}/out.file`, tempPath: `${dir}/.out.file.partial` };
}

Deno.test("csvCell() quotes commas, quotes and line breaks, and leaves null empty", () => {
  assert.equal(csvCell("plain"), "plain");
  assert.equal(csvCell("a,b"), '"a,b"');
  assert.equal(csvCell('say "hi"'), '"say ""hi"""');
  assert.equal(csvCell("two\nlines"), '"two\nlines"');
  assert.equal(csvCell(null), "");
  assert.equal(csvCell(undefined), "");
  assert.equal(csvCell(-1.5), "-1.5");
  assert.equal(csvCell(true), "true");
  assert.equal(csvLine(["a", 1, null]), "a,1,\r\n");
});

Deno.test("flattenRow() dots nested keys and encodes arrays as JSON", () => {
  assert.deepEqual(
    flattenRow({
      type: "Feature",
      properties: { name: "Ohio", fips: "39" },
      geometry: { type: "Polygon", coordinates: [[1, 2]] },
    }),
    {
      type: "Feature",
      "properties.name": "Ohio",
      "properties.fips": "39",
      "geometry.type": "Polygon",
      "geometry.coordinates": "[[1,2]]",
    },
  );
});

Deno.test("openRowWriter() writes CSV with the given column order, then moves it into place", async () => {
  const p = paths();
  const writer = await openRowWriter({ format: "csv", ...p, columns: ["date", "value"] });
  await writer.write([{ value: 1.5, date: "2020-01-01", extra: "x" }, {
    date: "2020-02-01",
    value: null,
    extra: "y",
  }]);
  await writer.write([{ date: "2020-03-01", value: 2, extra: "z" }]);
  assert.ok(Deno.statSync(p.tempPath).isFile, "written under the temporary name meanwhile");
  const summary = await writer.close();
  assert.equal(summary.rows_written, 3);
  assert.throws(() => Deno.statSync(p.tempPath));
  const text = Deno.readTextFileSync(p.path);
  assert.equal(text, "date,value,extra\r\n2020-01-01,1.5,x\r\n2020-02-01,,y\r\n2020-03-01,2,z\r\n");
  assert.equal(summary.bytes, new TextEncoder().encode(text).length);
});

Deno.test("openRowWriter() keeps CSV columns first met in a later batch, padding the earlier rows", async () => {
  const p = paths();
  const writer = await openRowWriter({ format: "csv", ...p, columns: ["date"] });
  // Quoted cells hold commas, quotes and line breaks: only real row ends may be padded.
  await writer.write([{ date: "1991-01-01", A_20200704: 1.5, note: 'a,"b"\r\nc' }, {
    date: "1992-01-01",
    A_20200704: 2,
  }]);
  await writer.write([{ date: "1993-01-01", A_20210729: 3 }]);
  await writer.write([{ date: "1994-01-01", A_20200704: null, A_20210729: 4, A_20240101: 5 }]);
  const summary = await writer.close();
  const text = Deno.readTextFileSync(p.path);
  assert.equal(
    text,
    "date,A_20200704,note,A_20210729,A_20240101\r\n" +
      '1991-01-01,1.5,"a,""b""\r\nc",,\r\n' +
      "1992-01-01,2,,,\r\n" +
      "1993-01-01,,,3,\r\n" +
      "1994-01-01,,,4,5\r\n",
  );
  assert.equal(summary.rows_written, 4);
  assert.equal(summary.bytes, new TextEncoder().encode(text).length);
  const dir = p.path.slice(0, p.path.lastIndexOf("/"));
  assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["out.file"], "no work file is left");
});

Deno.test("openRowWriter() pads a large CSV across read chunks when a column comes late", async () => {
  const p = paths();
  const writer = await openRowWriter({ format: "csv", ...p, columns: ["date", "value"] });
  const rows = 20_000;
  await writer.write(
    Array.from({ length: rows }, (_, i) => ({ date: `row-${i}`, value: i % 7 === 0 ? `"q",${i}` : i })),
  );
  await writer.write([{ date: "last", value: 1, late: "x" }]);
  await writer.close();
  const lines = Deno.readTextFileSync(p.path).split("\r\n");
  assert.equal(lines.length - 1, rows + 2);
  assert.equal(lines[0], "date,value,late");
  assert.equal(lines[7], "row-6,6,");
  assert.equal(lines[8], 'row-7,"""q"",7",');
  assert.equal(lines[rows - 1], `row-${rows - 2},${rows - 2},`);
  assert.equal(lines[rows + 1], "last,1,x");
  assert.ok(lines.slice(1, -1).every((l) => l.endsWith(",") || l === "last,1,x"), "every row padded once");
});

Deno.test("openRowWriter() writes JSON with the head fields and the rows under their key", async () => {
  const p = paths();
  const writer = await openRowWriter({
    format: "json",
    ...p,
    head: { source: { url: "https://example.org" }, units: "lin" },
    itemsKey: "observations",
  });
  await writer.write([{ date: "2020-01-01", value: null }]);
  await writer.write([{ date: "2020-02-01", value: 2 }, { date: "2020-03-01", value: 3 }]);
  await writer.close();
  assert.deepEqual(JSON.parse(Deno.readTextFileSync(p.path)), {
    source: { url: "https://example.org" },
    units: "lin",
    observations: [{ date: "2020-01-01", value: null }, { date: "2020-02-01", value: 2 }, {
      date: "2020-03-01",
      value: 3,
    }],
    rows_written: 3,
  });
});

Deno.test("openRowWriter() makes a valid file when there are no rows", async () => {
  const json = paths();
  await (await openRowWriter({ format: "json", ...json, itemsKey: "seriess" })).close();
  assert.deepEqual(JSON.parse(Deno.readTextFileSync(json.path)), { seriess: [], rows_written: 0 });
  const csv = paths();
  await (await openRowWriter({ format: "csv", ...csv, columns: ["date", "value"] })).close();
  assert.equal(Deno.readTextFileSync(csv.path), "date,value\r\n");
});

Deno.test("RowWriter.abort() removes the temporary file and leaves no final file", async () => {
  const p = paths();
  const writer = await openRowWriter({ format: "csv", ...p });
  await writer.write([{ a: 1 }]);
  await writer.abort();
  await writer.abort();
  assert.throws(() => Deno.statSync(p.tempPath));
  assert.throws(() => Deno.statSync(p.path));
  await assert.rejects(() => writer.write([{ a: 2 }]), /no longer open/);
});

Deno.test("openRowWriter() refuses to reuse an existing temporary file", async () => {
  const p = paths();
  Deno.writeTextFileSync(p.tempPath, "someone else's");
  await assert.rejects(() => openRowWriter({ format: "csv", ...p }), Deno.errors.AlreadyExists);
});

Deno.test("openRowWriter() streams 100,000 rows page by page with bounded memory", async () => {
  const p = paths();
  const pageSize = 10_000;
  let produced = 0;
  let consumed = 0;
  let mostOutstanding = 0;
  // The source builds each page only when asked, as the FRED pager does.
  async function* pages(): AsyncGenerator<Record<string, unknown>[]> {
    for (let page = 0; page < 10; page++) {
      const rows = Array.from({ length: pageSize }, (_, i) => {
        const n = page * pageSize + i;
        return {
          date: `row-${n}`,
          value: n % 97 === 0 ? null : n / 7,
          realtime_start: "2024-01-02",
          realtime_end: "2024-01-02",
        };
      });
      produced += rows.length;
      mostOutstanding = Math.max(mostOutstanding, produced - consumed);
      yield rows;
    }
  }
  (globalThis as { gc?: () => void }).gc?.();
  const before = Deno.memoryUsage();
  const started = performance.now();
  const writer = await openRowWriter({
    format: "csv",
    ...p,
    columns: ["date", "value", "realtime_start", "realtime_end"],
  });
  let peakHeap = 0;
  for await (const rows of pages()) {
    await writer.write(rows);
    consumed += rows.length;
    peakHeap = Math.max(peakHeap, Deno.memoryUsage().heapUsed);
  }
  const summary = await writer.close();
  const after = Deno.memoryUsage();
  const seconds = (performance.now() - started) / 1000;

  assert.equal(summary.rows_written, 100_000);
  assert.equal(writer.largestBatch, pageSize, "the writer never held more than one page");
  assert.equal(mostOutstanding, pageSize, "no page was built before the previous one was written");
  const file = Deno.readTextFileSync(p.path);
  assert.equal(file.split("\r\n").length - 1, 100_001);
  const rssGrowthMb = (after.rss - before.rss) / 1_048_576;
  const heapGrowthMb = (peakHeap - before.heapUsed) / 1_048_576;
  // Bounded memory is shown by the counts above (the writer never held more than one page, and no
  // page was built before the previous one was written), not by the process's memory: the suite
  // runs files in parallel workers of one process, whose RSS this test cannot own, and GC timing
  // moves the heap by more than a page. The figures are printed for a reader, never asserted.
  console.log(
    `100,000 rows: ${(summary.bytes / 1_048_576).toFixed(1)} MB file in ${seconds.toFixed(2)} s; ` +
      `rss +${rssGrowthMb.toFixed(1)} MB, peak heap +${heapGrowthMb.toFixed(1)} MB`,
  );
});

Deno.test("mimeTypeOf() names CSV and JSON", () => {
  assert.equal(mimeTypeOf("csv"), "text/csv");
  assert.equal(mimeTypeOf("json"), "application/json");
  assert.equal(mimeTypeOf("bin"), "application/octet-stream");
});

Deno.test("openRowWriter() asks charge() before each write and writes nothing it refuses", async () => {
  const p = paths();
  const charged: number[] = [];
  const writer = await openRowWriter({
    format: "csv",
    ...p,
    charge: (bytes) => {
      if (charged.reduce((a, b) => a + b, 0) + bytes > 40) throw new Error("full");
      charged.push(bytes);
    },
  });
  await writer.write([{ a: 1 }]);
  await assert.rejects(writer.write([{ a: "x".repeat(50) }]), /full/);
  assert.equal(Deno.readTextFileSync(p.tempPath), "a\r\n1\r\n", "the refused chunk never landed");
  await writer.abort();
  assert.throws(() => Deno.statSync(p.tempPath), Deno.errors.NotFound);
});

Deno.test("openRowWriter() JSON files carry a trailer after the rows", async () => {
  const p = paths();
  const writer = await openRowWriter({ format: "json", ...p, itemsKey: "observations", head: { limit: 2 } });
  await writer.write([{ v: 1 }]);
  await writer.close({ incomplete: true, missing: { rows: 1 } });
  assert.deepEqual(JSON.parse(Deno.readTextFileSync(p.path)), {
    limit: 2,
    observations: [{ v: 1 }],
    incomplete: true,
    missing: { rows: 1 },
    rows_written: 1,
  });
});
