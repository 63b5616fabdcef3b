// Fair share across replicas: two real server processes with one real redis-server and one
// shared data folder. A client's project quota and its per-client request budget (IPv6 by /64)
// hold across both replicas; another client keeps its own.
import assert from "node:assert/strict";
import { startHttpServer } from "../harness/spawn_http.ts";
import type { HttpServerProcess } from "../harness/spawn_http.ts";
import { removeHome, scratchHome } from "../harness/spawn.ts";
import { Client, StreamableHTTPClientTransport } from "../harness/sdk_client.ts";
import { errorOf, ok } from "../harness/results.ts";
import { fredConfig, startFakeFred } from "../providers/fred/fake_fred.ts";
import { startRedis } from "./_redis_server.ts";

async function connect(server: HttpServerProcess, address: string): Promise<Client> {
  const client = new Client({ name: "fair-share-replicas", version: "0" }, { capabilities: {} });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`), {
      requestInit: { headers: { "X-Forwarded-For": address } },
    }),
  );
  return client;
}

Deno.test("replicas on one Redis hold one client's project quota and its /64 request budget across both; another client keeps its own", async (t) => {
  await using redis = await startRedis();
  await using fake = startFakeFred();
  const home = scratchHome(fredConfig(fake.origin));
  await using _home = { [Symbol.asyncDispose]: () => Promise.resolve(removeHome(home)) };
  const options = {
    args: ["--providers", "fred", "--stateless"],
    home,
    env: {
      REDIS_URL: redis.url,
      MCP_TRUST_PROXY: "true",
      RATE_LIMIT_ENABLED: "true",
      RATE_LIMIT_PER_MINUTE: "20",
      MCP_QUOTA_PROJECTS: "2",
    },
  };
  const [a, b] = await Promise.all([startHttpServer(options), startHttpServer(options)]);
  await using _a = a;
  await using _b = b;
  const clients: Client[] = [];
  const open = async (server: HttpServerProcess, address: string) => {
    const c = await connect(server, address);
    clients.push(c);
    return c;
  };
  const create = (c: Client, name: string) =>
    c.callTool({ name: "fred_project_create", arguments: { project_name: name } });
  try {
    await t.step(
      "projects: the hog's quota is counted across replicas; the victim creates its own",
      async () => {
        const hogA = await open(a, "203.0.113.5");
        const hogB = await open(b, "203.0.113.5");
        const victimB = await open(b, "198.51.100.1");
        ok(await create(hogA, "hog-one"));
        ok(await create(hogB, "hog-two"));
        const e = errorOf(await create(hogA, "hog-three"));
        assert.equal(e["error_type"], "QUOTA_EXCEEDED");
        assert.equal(
          e["message"],
          "Your quota on this server is full: your client keeps 2 projects, the most one client may (2); no new project was created",
        );
        ok(await create(victimB, "victim-one"));
        const listed = ok(await victimB.callTool({ name: "fred_project_list", arguments: {} }));
        assert.ok(JSON.stringify(listed).includes("victim-one"));
      },
    );

    await t.step(
      "rate limit: 30 addresses of one /64, alternating replicas, share one budget of 20",
      async () => {
        const statuses: number[] = [];
        for (let i = 1; i <= 30; i++) {
          const server = i % 2 === 0 ? a : b;
          const res = await fetch(`${server.origin}/`, {
            headers: { "X-Forwarded-For": `2001:db8:5::${i.toString(16)}` },
          });
          await res.body?.cancel();
          statuses.push(res.status);
        }
        assert.equal(statuses.filter((s) => s === 200).length, 20, statuses.join(","));
        assert.equal(statuses.filter((s) => s === 429).length, 10);
        assert.deepEqual(statuses.slice(20), Array(10).fill(429), "the budget ends and stays ended");
        const neighbour = await fetch(`${a.origin}/`, { headers: { "X-Forwarded-For": "2001:db8:5:1::1" } });
        await neighbour.body?.cancel();
        assert.equal(neighbour.status, 200, "the next /64 has its own budget");
      },
    );
  } finally {
    for (const c of clients) await c.close().catch(() => {});
  }
});
