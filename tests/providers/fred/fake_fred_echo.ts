// A fake FRED that echoes the API key back (docs/SECURITY.md, "Secrets"), in every form
// tests/fakes/secret_forms.ts lists: for tests/providers/fred/e2e_secrets_test.ts and the hostile
// run (tools/bench/hostile_secrets.ts), which loads it without the test harness.
import { secretForms } from "../../fakes/secret_forms.ts";
import type { FakeUpstream, Received } from "../../fakes/upstream.ts";
import { fredError, TEST_KEY } from "./fake_fred.ts";

/** The forms of TEST_KEY the fake echoes; series `ERR<i>` fails with form `i` in its error body. */
export const ECHOED_FORMS = secretForms(TEST_KEY);
const FORMS = ECHOED_FORMS;

/** Routes under which FRED echoes the key: series ECHO (search and get), its observations, and ERR. */
export function routeEchoes(fake: FakeUpstream): void {
  const series = FORMS.map((f, i) => ({
    id: `ECHO${i}`,
    title: `Series ${f.echo} title`,
    notes: `Notes say ${f.echo}.`,
    realtime_start: f.echo,
    realtime_end: "2024-01-02",
    frequency: "Annual",
    units: f.echo,
  }));
  const echoing = (r: Received) =>
    r.url.searchParams.get("series_id") === "ECHO" || r.url.searchParams.get("search_text") === "echo";
  fake.route({
    path: "/fred/series",
    match: (r) => r.url.searchParams.get("series_id")?.startsWith("ERR") ?? false,
    reply: (r) => {
      const form = FORMS[Number(r.url.searchParams.get("series_id")!.slice(3))]!;
      return fredError(400, `Bad Request.  Variable api_key=${form.echo} is not registered.`);
    },
  }).route({ path: "/fred/series", match: echoing, reply: () => ({ json: { seriess: series } }) })
    .route({
      path: "/fred/series/search",
      match: echoing,
      reply: () => ({ json: { count: series.length, offset: 0, limit: 1000, seriess: series } }),
    })
    .route({
      path: "/fred/series/observations",
      match: echoing,
      reply: () => ({
        json: {
          realtime_start: FORMS[0]!.echo,
          realtime_end: "2024-01-02",
          units: "lin",
          output_type: 1,
          count: FORMS.length,
          offset: 0,
          limit: 100000,
          observations: FORMS.map((f, i) => ({
            realtime_start: f.echo,
            realtime_end: "2024-01-02",
            date: `${2000 + i}-01-01`,
            value: f.echo,
          })),
        },
      }),
    });
}
