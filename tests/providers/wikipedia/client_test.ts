import assert from "node:assert/strict";
import { FakeClock } from "../../../lib/clock.ts";
import { HttpRuntime, loadHttpClient } from "../../../lib/http/runtime.ts";
import { Logger } from "../../../lib/log.ts";
import type { ToolCallContext } from "../../../lib/mcp/provider.ts";
import { WikipediaApi } from "../../../lib/providers/wikipedia/client.ts";
import { wikipediaSpec } from "../../../lib/providers/wikipedia/config.ts";
import { FakeUpstream } from "../../fakes/upstream.ts";

// Clients are made here directly (the app loads their code with a provider's).
await loadHttpClient();

Deno.test("WikipediaApi keeps a bounded number of language clients", async () => {
  await using fake = FakeUpstream.start([{
    path: /\/w\/api\.php$/,
    reply: { json: { batchcomplete: true } },
  }]);
  const settings = wikipediaSpec.schema.parse({ base_url: `${fake.origin}/{lang}`, cache_ttl: 0 });
  const clock = new FakeClock();
  const api = new WikipediaApi(settings, new HttpRuntime({ clock }), clock);
  const ctx = { signal: new AbortController().signal, logger: new Logger() } as unknown as ToolCallContext;
  const codes = Array.from(
    { length: 100 },
    (_, i) => `x${String.fromCharCode(97 + (i % 26))}${"abcd"[i >> 5]}`,
  );
  for (const code of new Set(codes)) await api.call(code, { action: "query" }, ctx, clock.now() + 10_000);
  assert.equal(new Set(codes).size > 64, true);
  assert.equal(api.clientCount, 64);
  assert.ok(fake.requests.every((r) => r.url.pathname.endsWith("/w/api.php")));
});
