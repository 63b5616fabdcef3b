// Measures the server process's peak RSS (VmHWM) while a background job streams a 1,000,000-row
// series in pages of FRED_PAGE_SIZE rows to CSV. Run: deno run -A tools/bench/fred_job_rss.ts [page_size] [rows]
import { startStdio } from "../../tests/harness/spawn.ts";
import { fredConfig, startFakeFred, syntheticObservations } from "../../tests/providers/fred/fake_fred.ts";

const pageSize = Number(Deno.args[0] ?? 100_000);
const rows = Number(Deno.args[1] ?? 1_000_000);

function peakRssMb(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]) / 1024;
}

await using fake = startFakeFred();
fake.route({
  path: "/fred/series/observations",
  match: (r) => r.url.searchParams.get("series_id") === "HUGE",
  reply: (r) => ({
    json: syntheticObservations(
      rows,
      Number(r.url.searchParams.get("offset") ?? 0),
      Number(r.url.searchParams.get("limit") ?? 100_000),
    ),
  }),
});
await using s = await startStdio({
  args: ["--providers", "fred"],
  configYaml: fredConfig(fake.origin, { page_size: pageSize, max_body_mb: 256 }),
});
await s.client.listTools();
const pid = s.transport.child!.pid;
const before = peakRssMb(pid);
const started = performance.now();
const accepted = await s.client.callTool({
  name: "fred_series",
  arguments: { operation: "get_observations", series_id: "HUGE", output: "file" },
});
const callMs = performance.now() - started;
const jobId = (accepted.structuredContent as Record<string, unknown>)["job_id"];
let status: Record<string, unknown> = {};
for (let i = 0; i < 20; i++) {
  const r = await s.client.callTool({
    name: "fred_job_status",
    arguments: { job_id: jobId, wait_seconds: 60 },
  });
  status = r.structuredContent as Record<string, unknown>;
  if (!["accepted", "processing"].includes(String(status["status"]))) break;
}
const after = peakRssMb(pid);
console.log(JSON.stringify({
  page_size: pageSize,
  rows,
  starting_call_ms: Math.round(callMs),
  job_seconds: (performance.now() - started) / 1000,
  status: status["status"],
  message: status["message"],
  rows_written: (status["result"] as Record<string, unknown> | undefined)?.["rows_written"],
  peak_rss_mib_before: Math.round(before),
  peak_rss_mib_after: Math.round(after),
}));
