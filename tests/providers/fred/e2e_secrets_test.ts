// An upstream that echoes the API key (docs/SECURITY.md, "Secrets"): a fake FRED puts the key, in
// every form tests/fakes/secret_forms.ts lists, into series titles, notes, realtime_start, the
// observation values and an error body. No form may come back in an answer's text or structured
// content, the CSV written with output "file", its resources/read, opendata_read, an error
// answer or the server's log. Driven through the real MCP client against a loopback fake.
import assert from "node:assert/strict";
import { leakedForms } from "../../fakes/secret_forms.ts";
import { openProvider } from "../../harness/provider.ts";
import type { ToolResult } from "../../harness/results.ts";
import { errorOf, ok } from "../../harness/results.ts";
import { startFakeFred, TEST_KEY } from "./fake_fred.ts";
import { ECHOED_FORMS, routeEchoes } from "./fake_fred_echo.ts";
import { fred } from "./_helpers.ts";

/** Every text of a result: its blocks and its structured content, as JSON. */
function everything(r: ToolResult): string {
  return JSON.stringify([r.content, r.structuredContent ?? null]);
}

function assertNoLeak(text: string, where: string): void {
  assert.deepEqual(leakedForms(text, TEST_KEY), [], `${where} leaks the key`);
}

Deno.test("fred answers mask the key an upstream echoes in titles, notes, dates and values", async () => {
  await using fake = startFakeFred();
  routeEchoes(fake);
  await using s = await openProvider(fred({ fake }));
  const call = (args: Record<string, unknown>) => s.client.callTool({ name: "fred_series", arguments: args });
  for (const format of ["markdown", "json"]) {
    const searched = await call({ operation: "search", search_text: "echo", response_format: format });
    assert.ok(ok(searched), "the search answers");
    assertNoLeak(everything(searched), `the ${format} search answer`);
    const got = await call({ operation: "get", series_id: "ECHO", response_format: format });
    assertNoLeak(everything(got), `the ${format} series answer`);
    const observed = await call({
      operation: "get_observations",
      series_id: "ECHO",
      response_format: format,
    });
    assert.ok(ok(observed), "the observations answer");
    assertNoLeak(everything(observed), `the ${format} observations answer`);
    assert.match(everything(observed), /\[redacted\]/, "the masked places say so");
  }
  assertNoLeak(s.stderr(), "the log");
});

Deno.test("fred files, their resources/read and opendata_read carry no form of the echoed key", async () => {
  await using fake = startFakeFred();
  routeEchoes(fake);
  await using s = await openProvider(fred({ fake }));
  for (const format of ["csv", "json"]) {
    const wrote = await s.client.callTool({
      name: "fred_series",
      arguments: { operation: "get_observations", series_id: "ECHO", output: "file", format },
    });
    const r = ok(wrote);
    assertNoLeak(everything(wrote), `the ${format} file answer`);
    const written = Deno.readTextFileSync(String(r["file_path"]));
    assert.ok(written.includes("[redacted]"), `the ${format} file holds the rows, masked`);
    assertNoLeak(written, `the written ${format} file`);
    const read = await s.client.readResource({ uri: String(r["resource_uri"]) });
    assertNoLeak(JSON.stringify(read), `resources/read of the ${format} file`);
    const paged = await s.client.callTool({
      name: "opendata_call",
      arguments: { tool: "opendata_read", arguments: JSON.stringify({ uri: String(r["resource_uri"]) }) },
    });
    assert.ok(ok(paged), "opendata_read answers");
    assertNoLeak(everything(paged), `opendata_read of the ${format} file`);
  }
  assertNoLeak(s.stderr(), "the log");
});

Deno.test("fred error answers and the log mask the key an upstream error body echoes, in every form", async () => {
  await using fake = startFakeFred();
  routeEchoes(fake);
  await using s = await openProvider(fred({ fake, server: { log_level: "debug" } }));
  for (const [i, form] of ECHOED_FORMS.entries()) {
    const r = await s.client.callTool({
      name: "fred_series",
      arguments: { operation: "get", series_id: `ERR${i}` },
    });
    const e = errorOf(r);
    assert.equal(e["status"], 400);
    assertNoLeak(everything(r), `the error answer echoing ${form.name}`);
  }
  assertNoLeak(s.stderr(), "the log");
});

Deno.test("fred resources/read and opendata_read mask a stored file that holds the key", async () => {
  await using fake = startFakeFred();
  routeEchoes(fake);
  await using s = await openProvider(fred({ fake }));
  const r = ok(
    await s.client.callTool({
      name: "fred_series",
      arguments: { operation: "get_observations", series_id: "GNPCA", output: "file" },
    }),
  );
  // As a file written before the key was configured, or put there by hand, would hold it.
  const raw = ECHOED_FORMS.map((f, i) => `${2000 + i}-01-01,${f.echo}`).join("\r\n");
  Deno.writeTextFileSync(String(r["file_path"]), `date,value\r\n${raw}\r\n`);
  const read = await s.client.readResource({ uri: String(r["resource_uri"]) });
  assert.match(JSON.stringify(read), /2015-01-01,\[redacted\]/);
  assertNoLeak(JSON.stringify(read), "resources/read of the stored file");
  const paged = await s.client.callTool({
    name: "opendata_call",
    arguments: { tool: "opendata_read", arguments: JSON.stringify({ uri: String(r["resource_uri"]) }) },
  });
  assert.equal(ok(paged)["total"], ECHOED_FORMS.length, "every row is read");
  assertNoLeak(everything(paged), "opendata_read of the stored file");
});
