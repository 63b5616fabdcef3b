// FRED results stay within the character limit however large the fields FRED sends: notes,
// titles and answer fields are bounded in text and structuredContent alike, the answer says so,
// and the whole values stay reachable in a file.
import assert from "node:assert/strict";
import type { StdioSession } from "../../harness/spawn.ts";
import type { Received } from "../../fakes/upstream.ts";
import { fixtureText } from "../../fakes/upstream.ts";
import { errorOf, ok, texts } from "../../harness/results.ts";
import { openProvider } from "../../harness/provider.ts";
import { fredError, startFakeFred } from "./fake_fred.ts";
import { fred } from "./_helpers.ts";
import { NOTES_MAX } from "../../../lib/providers/fred/parse.ts";

type Result = Awaited<ReturnType<StdioSession["client"]["callTool"]>>;

const LIMIT = 25_000;
const FIVE_MB = 5 * 1024 * 1024;

/** Words, so a cut at a word boundary is possible; `n` characters. */
function words(n: number): string {
  const phrase = "inflation adjusted gross national product ";
  return phrase.repeat(Math.ceil(n / phrase.length)).slice(0, n);
}

Deno.test("fred bounds every field copied from FRED and cuts a hostile one, saying so, in files too", async (t) => {
  await using fake = startFakeFred();
  const recorded = JSON.parse(fixtureText("fred/recorded_series_GNPCA.json"));
  const notes = words(FIVE_MB);
  fake.route({
    path: "/fred/series",
    match: (r: Received) => r.url.searchParams.get("series_id") === "HUGE",
    reply: {
      json: {
        ...recorded,
        extra_field: words(FIVE_MB),
        seriess: [{ ...recorded.seriess[0], id: "HUGE", title: words(100_000), notes }],
      },
    },
  });
  fake.route({
    path: "/fred/series/search",
    match: (r: Received) => r.url.searchParams.get("search_text") === "many",
    reply: (r) => {
      const limit = Number(r.url.searchParams.get("limit"));
      const seriess = Array.from(
        { length: limit },
        (_, i) => ({ ...recorded.seriess[0], id: `M${i}`, title: words(400) }),
      );
      return { json: { count: 5000, offset: 0, limit, seriess } };
    },
  });
  fake.route({
    path: "/fred/series",
    match: (r: Received) => r.url.searchParams.get("series_id") === "LOUD",
    // The shared client keeps 4 KB of an error body; of that, FRED's message is cut to 500 characters.
    reply: fredError(400, `Bad Request.  ${words(3000)}`),
  });
  await using s = await openProvider(fred({ fake }));
  const call = (args: Record<string, unknown>): Promise<Result> =>
    s.client.callTool({ name: "fred_series", arguments: args });

  const item0 = (body: Record<string, unknown>) => (body["items"] as Record<string, string>[])[0]!;
  const within = (r: Result): void => {
    const structured = JSON.stringify(r.structuredContent ?? null).length;
    assert.ok(structured <= LIMIT, `structuredContent: ${structured} characters`);
    for (const text of texts(r)) assert.ok(text.length <= LIMIT, `text: ${text.length} characters`);
    assert.ok(JSON.stringify(r).length <= 2 * LIMIT + 2000, `whole result: ${JSON.stringify(r).length}`);
    assert.doesNotMatch(texts(r)[0]!, /\[Truncated/, "cut by the tool, not by the last-resort clamp");
  };

  await t.step(
    "screen output bounds a 5 MB note, a long title and a 5 MB answer field, and says so",
    async () => {
      for (const response_format of ["markdown", "json"]) {
        const r = await call({ operation: "get", series_id: "HUGE", output: "screen", response_format });
        const body = ok(r);
        within(r);
        // The answer field; the title was cut on reading (below); notes are always shortened inline.
        assert.equal(body["clipped_fields"], 1);
        assert.ok(String(item0(body)["notes"]).length <= 201);
        const item = item0(body);
        assert.equal(item["id"], "HUGE");
        assert.ok(item["title"]!.length < 2000);
        assert.match(item["title"]!, /… \[cut: 100,000 characters in all\]$/);
        assert.ok(String((body["meta"] as Record<string, unknown>)["extra_field"]).length < 400);
        if (response_format === "markdown") assert.match(texts(r)[0]!, /output: "file" keeps them whole/);
      }
    },
  );

  await t.step(
    "auto writes such a result to a file with the hostile fields cut and marked, with a bounded excerpt",
    async () => {
      const r = await call({ operation: "get", series_id: "HUGE", format: "json" });
      const body = ok(r);
      within(r);
      assert.equal(body["output_mode"], "file");
      const file = JSON.parse(Deno.readTextFileSync(String(body["file_path"])));
      const cut = `… [cut: ${FIVE_MB.toLocaleString("en-US")} characters in all]`;
      assert.equal(
        file.seriess[0].notes,
        `${notes.slice(0, NOTES_MAX - 1)}${cut}`,
        "the note is cut and says so",
      );
      assert.ok(file.extra_field.endsWith(cut), "so is the answer's field");
      assert.ok(file.extra_field.length < NOTES_MAX + 50, "a 5 MB field does not make a 5 MB file");
      assert.ok(String((body["excerpt"] as Record<string, unknown>[])[0]!["title"]).length < 2000);
    },
  );

  await t.step("many long items are cut at an item boundary with the offset to go on from", async () => {
    const r = await call({ operation: "search", search_text: "many", limit: 1000, output: "screen" });
    const body = ok(r);
    within(r);
    assert.equal(body["truncated"], true);
    const shown = (body["items"] as unknown[]).length;
    assert.ok(shown > 0 && shown < 1000);
    assert.equal(body["next_offset"], shown);
    assert.match(texts(r)[0]!, new RegExp(`offset=${shown}`));
  });

  await t.step("a long error message from FRED is cut in the error payload", async () => {
    const r = await call({ operation: "get", series_id: "LOUD" });
    const e = errorOf(r);
    assert.equal(e["error_type"], "INVALID_REQUEST");
    assert.ok(String(e["message"]).length < 1000, `${String(e["message"]).length} characters`);
    assert.match(
      String(e["message"]),
      /^FRED rejected the request: inflation adjusted .*FRED's message was cut/,
    );
    assert.ok(JSON.stringify(r).length < 4000);
  });
});
