// A row writer reopened at a checkpoint, as a job taken over by another replica does: the bytes
// after the checkpoint (a half-written batch) are cut off and the file ends as if never stopped.
import assert from "node:assert/strict";
import { openRowWriter, resumeRowWriter } from "../../lib/output/row_writers.ts";
import type { FileFormat, RowWriter, WriterCheckpoint } from "../../lib/output/row_writers.ts";

function paths(): { path: string; tempPath: string } {
  const dir = Deno.makeTempDirSync();
  return { path: `${dir}/out.file`, tempPath: `${dir}/.out.file.partial` };
}

const BATCHES: Record<string, unknown>[][] = [
  [{ date: "1991-01-01", A: 1.5, note: 'a,"b"\r\nc' }, { date: "1992-01-01", A: 2 }],
  [{ date: "1993-01-01", B: 3 }],
  [{ date: "1994-01-01", A: null, B: 4, C: 5 }],
  [{ date: "1995-01-01", D: "late" }],
];

/** Writes `batches` with one writer, start to end; resolves to the file's text. */
async function uninterrupted(format: FileFormat, batches: Record<string, unknown>[][]): Promise<string> {
  const p = paths();
  const writer = await openRowWriter({ format, ...p, columns: ["date"], head: { source: "x" } });
  for (const batch of batches) await writer.write(batch);
  await writer.close({ done: true });
  return Deno.readTextFileSync(p.path);
}

/**
 * Writes the first `before` batches, takes a checkpoint, writes one more batch half (the dead
 * writer's page in flight), then carries on with a new writer from the checkpoint.
 */
async function interrupted(
  format: FileFormat,
  batches: Record<string, unknown>[][],
  before: number,
): Promise<{ text: string; charged: number }> {
  const p = paths();
  const options = { format, ...p, columns: ["date"], head: { source: "x" } };
  const first = await openRowWriter(options);
  for (const batch of batches.slice(0, before)) await first.write(batch);
  const point = JSON.parse(JSON.stringify(first.checkpoint())) as WriterCheckpoint;
  await first.write(batches[before]!);
  // The dead process's last bytes: part of a row, never finished.
  Deno.writeTextFileSync(p.tempPath, "1999-01-01,half", { append: true });
  let charged = 0;
  const second: RowWriter = await resumeRowWriter({ ...options, charge: (n) => (charged += n) }, point);
  assert.equal(second.rowsWritten, point.rows);
  for (const batch of batches.slice(before)) await second.write(batch);
  await second.close({ done: true });
  return { text: Deno.readTextFileSync(p.path), charged };
}

Deno.test("resumeRowWriter() ends a CSV file byte for byte like an uninterrupted writer", async () => {
  const whole = await uninterrupted("csv", BATCHES);
  for (let before = 0; before < BATCHES.length; before++) {
    const { text, charged } = await interrupted("csv", BATCHES, before);
    assert.equal(text, whole, `stopped after ${before} batches`);
    if (before > 0) assert.ok(charged > 0, "the kept bytes are charged to the new writer");
  }
  assert.match(whole, /^date,A,note,B,C,D\r\n/, "the late columns are in the header");
});

Deno.test("resumeRowWriter() ends a JSON file byte for byte like an uninterrupted writer", async () => {
  const whole = await uninterrupted("json", BATCHES);
  for (let before = 0; before < BATCHES.length; before++) {
    assert.equal((await interrupted("json", BATCHES, before)).text, whole, `stopped after ${before} batches`);
  }
  assert.equal(JSON.parse(whole).items.length, 5);
});

Deno.test("resumeRowWriter() refuses a checkpoint past the file's end or with columns that do not fit", async () => {
  const p = paths();
  const options = { format: "csv" as const, ...p, columns: ["date"] };
  const writer = await openRowWriter(options);
  await writer.write(BATCHES[0]!);
  await writer.write(BATCHES[1]!);
  const point = writer.checkpoint();
  const size = Deno.statSync(p.tempPath).size;
  await assert.rejects(
    resumeRowWriter(options, { ...point, bytes: size + 1 }),
    /does not match its checkpoint/,
  );
  await assert.rejects(resumeRowWriter(options, { ...point, bytes: -1 }), /does not match its checkpoint/);
  await assert.rejects(
    resumeRowWriter(options, { ...point, state: { ...point.state, segments: [[size + 5, 4]] } }),
    /columns do not fit/,
  );
  await assert.rejects(
    resumeRowWriter(options, { ...point, state: { columns: ["date", "date"], segments: [[10, 2]] } }),
    /columns do not fit/,
  );
  assert.equal(Deno.statSync(p.tempPath).size, size, "a refused checkpoint leaves the file as it was");
  await assert.rejects(
    resumeRowWriter({ ...options, tempPath: `${p.tempPath}.none` }, point),
    Deno.errors.NotFound,
  );
});
