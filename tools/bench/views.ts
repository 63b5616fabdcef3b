// The size of each interactive view (MCP Apps) as served by resources/read, against its budget:
// a host fetches the whole document before it can show anything, and may keep it per
// conversation. Sizes are exact, not timed: tests/mcp/views_html_test.ts holds them to the budget.
// Run alone (`deno run tools/bench/views.ts`) it prints its section of docs/BENCHMARKS.md.
import { viewResources } from "../../lib/mcp/views/mod.ts";
import { VIEW_IDS } from "../../lib/mcp/views/model.ts";

/** Most bytes of one view's HTML (UTF-8, uncompressed): small enough to inline, big enough for a chart. */
export const VIEW_BUDGET_BYTES = 16 * 1024;

/** One view's size. */
export interface ViewSize {
  id: string;
  bytes: number;
  gzipBytes: number;
}

async function gzipLength(text: string): Promise<number> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  return (await new Response(stream).arrayBuffer()).byteLength;
}

/** The served size of every view (the places view with the default tile template written in). */
export async function viewSizes(): Promise<ViewSize[]> {
  const views = viewResources(VIEW_IDS, { tilesUrl: "https://tile.openstreetmap.org/{z}/{x}/{y}.png" });
  const out: ViewSize[] = [];
  for (const v of views) {
    const html = await v.html();
    out.push({
      id: v.id,
      bytes: new TextEncoder().encode(html).byteLength,
      gzipBytes: await gzipLength(html),
    });
  }
  return out;
}

/** The markdown rows of the views section. */
export async function viewRows(): Promise<string[]> {
  const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  return [
    "| View | HTML as served | gzip | Budget | Share of budget |",
    "| --- | --- | --- | --- | --- |",
    ...(await viewSizes()).map((s) =>
      `| \`ui://opendata-mcp/${s.id}.html\` | ${kib(s.bytes)} (${s.bytes} B) | ${kib(s.gzipBytes)} | ${
        kib(VIEW_BUDGET_BYTES)
      } | ${Math.round(s.bytes / VIEW_BUDGET_BYTES * 100)}% |`
    ),
  ];
}

if (import.meta.main) console.log((await viewRows()).join("\n"));
