// What OAuth costs per request: the token check alone (OAuthResourceServer.verify on an RS256
// JWT from oidc-provider, keys cached), and a tools/call round trip through the SDK client on
// a server with MCP_OAUTH_ISSUER next to the same server without authentication, in
// alternating rounds (the machine is shared: paired rounds cancel its drift).
//
//   deno run --allow-all tools/bench/oauth.ts      (also part of `deno task bench`)
import { systemClock } from "../../lib/clock.ts";
import { OAuthResourceServer } from "../../lib/mcp/http/oauth.ts";
import { startHttpServer } from "../../tests/harness/spawn_http.ts";
import type { HttpServerProcess } from "../../tests/harness/spawn_http.ts";
import { startAuthServer } from "../../tests/fakes/oidc.ts";
import { Client, StreamableHTTPClientTransport } from "../../tests/harness/sdk_client.ts";

/** One row of the bench's latency table. */
export interface OAuthRow {
  what: string;
  median: string;
  p95: string;
  note: string;
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * q))]!;
}

/** Measures the token check and the round trips; returns table rows. */
export async function benchOAuth(
  rounds = 10,
  callsPerRound = 20,
  verifications = 2_000,
): Promise<OAuthRow[]> {
  const as = await startAuthServer();
  const servers: HttpServerProcess[] = [];
  try {
    const resource = "http://127.0.0.1:9/mcp";
    const rs = new OAuthResourceServer({
      issuer: as.issuer,
      audiences: [],
      scopes: ["mcp:tools"],
      clockSkewS: 60,
      clock: systemClock,
    });
    const token = await as.serviceToken(resource, "mcp:tools");
    const verifyTimes: number[] = [];
    for (let i = 0; i < verifications; i++) {
      const t0 = performance.now();
      const verdict = await rs.verify(`Bearer ${token}`, resource);
      verifyTimes.push(performance.now() - t0);
      if (!verdict.ok) throw new Error(`the bench token was refused: ${verdict.description}`);
    }

    const [open, oauth] = await Promise.all([
      startHttpServer({ args: ["--providers", "example", "--stateless"] }),
      startHttpServer({
        args: ["--providers", "example", "--stateless"],
        env: { MCP_OAUTH_ISSUER: as.issuer },
      }),
    ]);
    servers.push(open!, oauth!);
    const bearer = await as.serviceToken(`${oauth!.origin}/mcp`, "mcp:tools");
    const connect = async (server: HttpServerProcess, headers: Record<string, string>) => {
      const client = new Client({ name: "bench-oauth", version: "0" }, { capabilities: {} });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`), { requestInit: { headers } }),
      );
      return client;
    };
    const clients = [await connect(open!, {}), await connect(oauth!, { Authorization: `Bearer ${bearer}` })];
    const times: [number[], number[]] = [[], []];
    const ratios: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const medians: number[] = [];
      for (const which of [0, 1] as const) {
        const own: number[] = [];
        for (let i = 0; i < callsPerRound; i++) {
          const t0 = performance.now();
          await clients[which]!.callTool({ name: "example-ping", arguments: {} });
          own.push(performance.now() - t0);
        }
        times[which].push(...own);
        medians.push(quantile(own, 0.5));
      }
      ratios.push(medians[1]! / medians[0]!);
    }
    for (const c of clients) await c.close();
    const ms = (x: number) => `${x.toFixed(2)} ms`;
    return [
      {
        what: "OAuth token check (RS256 JWT, cached keys), in process",
        median: ms(quantile(verifyTimes, 0.5)),
        p95: ms(quantile(verifyTimes, 0.95)),
        note: `${verifications} checks`,
      },
      {
        what: "stateless tools/call over HTTP, no authentication",
        median: ms(quantile(times[0], 0.5)),
        p95: ms(quantile(times[0], 0.95)),
        note: `${rounds} rounds of ${callsPerRound}, alternating with the next row`,
      },
      {
        what: "stateless tools/call over HTTP, MCP_OAUTH_ISSUER (token checked on every request)",
        median: ms(quantile(times[1], 0.5)),
        p95: ms(quantile(times[1], 0.95)),
        note: `median of per-round ratios to the row above: ${quantile(ratios, 0.5).toFixed(2)}x`,
      },
    ];
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await as.close();
  }
}

if (import.meta.main) {
  for (const row of await benchOAuth()) {
    console.log(`| ${row.what} | ${row.median} | ${row.p95} | ${row.note} |`);
  }
}
