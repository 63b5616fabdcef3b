// The longest the server's own event loop is held during one hostile call: the server runs in
// this process (tests/harness/in_process.ts) with a fake api.ra.no on 127.0.0.1, and a 1 ms timer
// here measures how late it fires. The victim latencies of `deno task hostile --targets compute`
// add what the processes of a shared machine take from each other; this is the server's part.
//
//   deno run -A tools/bench/loop_hold.ts
import { FakeUpstream } from "../../tests/fakes/upstream.ts";
import { bulkyFeature, spikyPolygonFeature } from "../../tests/fakes/hostile_bodies.ts";
import { startHttpInProcess } from "../../tests/harness/in_process.ts";
import { connectHttp } from "../../tests/harness/provider.ts";
const polygon = spikyPolygonFeature("910001", 600_000);
const bulky = bulkyFeature("910002", 1_700_000);
await using fake = FakeUpstream.start([
  { path: /\/items\/910001$/, reply: { body: polygon, contentType: "application/geo+json" } },
  { path: /\/items\/910002$/, reply: { body: bulky, contentType: "application/geo+json" } },
]);
await using server = await startHttpInProcess({
  args: ["--providers", "riksantikvaren_ogc"],
  configYaml: `providers:\n  riksantikvaren_ogc:\n    base_url: "${fake.origin}"\n    cache_ttl: 0\n`,
});
const { client } = await connectHttp(server.origin);
for (const id of ["910001", "910002", "910001", "910002"]) {
  let last = performance.now(), worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 1);
  const t = performance.now();
  const r = await client.callTool({
    name: "riksantikvaren-feature",
    arguments: { collection: "lokaliteter", id },
  });
  clearInterval(timer);
  console.log(
    id,
    r.isError ? "error" : "ok",
    `call ${(performance.now() - t).toFixed(0)} ms, longest loop hold ${worst.toFixed(0)} ms`,
  );
}
await client.close();
