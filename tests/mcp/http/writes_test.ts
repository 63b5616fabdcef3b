// A public deployment without authentication: `--writes off` (read-only) and `--writes bounded`
// (each client address owns its work, with a small quota), on the real server with FRED on its fake.
import assert from "node:assert/strict";
import { removeHome, scratchHome } from "../../harness/spawn.ts";
import { Client, StreamableHTTPClientTransport } from "../../harness/sdk_client.ts";
import {
  Client as Client2,
  MODERN,
  StreamableHTTPClientTransport as Http2,
} from "../../harness/sdk2_client.ts";
import { errorOf, ok } from "../../harness/results.ts";
import { fredConfig, routeStuckSeries, startFakeFred } from "../../providers/fred/fake_fred.ts";
import { startHttpInProcess } from "../../harness/in_process.ts";
import type { InProcessHttpServer } from "../../harness/in_process.ts";

type Result = Parameters<typeof ok>[0];

async function withServer(
  writes: string,
  serverYaml: string,
  fn: (server: InProcessHttpServer, connect: () => Promise<Client>, home: string) => Promise<void>,
): Promise<void> {
  await using fake = startFakeFred();
  const gate = routeStuckSeries(fake, 50_000);
  const home = scratchHome(`${fredConfig(fake.origin)}${serverYaml}`);
  const clients: Client[] = [];
  let server: InProcessHttpServer | undefined;
  try {
    server = await startHttpInProcess({ args: ["--providers", "fred", "--writes", writes], home });
    const connect = async () => {
      const client = new Client({ name: "writes-test", version: "0" }, { capabilities: {} });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server!.origin}/mcp`)));
      clients.push(client);
      return client;
    };
    await fn(server, connect, home);
  } finally {
    gate.release();
    for (const c of clients) await c.close().catch(() => {});
    await server?.stop();
    removeHome(home);
  }
}

/** Files being written (`.partial`) anywhere under `dir`. */
function partialFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) out.push(...partialFiles(path));
    else if (entry.name.endsWith(".partial")) out.push(entry.name);
  }
  return out;
}

const call = async (c: Client | Client2, name: string, args: Record<string, unknown>): Promise<Result> =>
  await c.callTool({ name, arguments: args }) as Result;

Deno.test("serve --writes off: reads answer, every write is refused with the way on", async () => {
  await withServer("off", "", async (server, connect) => {
    const health = await (await fetch(`${server.origin}/health`)).json();
    assert.deepEqual([health.auth, health.writes], ["none", "off"]);
    const root = await (await fetch(`${server.origin}/`)).json();
    assert.deepEqual([root.auth, root.writes], ["none", "off"]);
    const c = await connect();
    const inline = ok(await call(c, "fred_series", { operation: "get_observations", series_id: "GNPCA" }));
    assert.equal(inline["kind"], "observations", "an inline read works");
    for (
      const [name, args, what] of [
        ["fred_project_create", { project_name: "alpha" }, /does not create projects/],
        [
          "fred_series",
          { operation: "get_observations", series_id: "GNPCA", output: "file" },
          /does not write files/,
        ],
        [
          "fred_series",
          { operation: "get_observations", series_id: "STUCK" },
          /does not (write files|start background jobs)/,
        ],
      ] as const
    ) {
      const e = errorOf(await call(c, name, args));
      assert.equal(e["error_type"], "CONFIGURATION_ERROR", name);
      assert.match(String(e["message"]), /read-only \(MCP_WRITES=off\)/);
      assert.match(String(e["message"]), what);
      assert.match(String(e["hint"]), /inline/);
    }
    assert.deepEqual(ok(await call(c, "fred_project_list", {}))["projects"], []);
  });
});

Deno.test("serve --writes bounded: a client address owns its work and one quota across its sessions and eras", async () => {
  const yaml = "server:\n  quota_projects: 2\n  quota_jobs: 1\n";
  await withServer("bounded", yaml, async (server, connect, home) => {
    assert.equal((await (await fetch(`${server.origin}/health`)).json()).writes, "bounded");
    const first = await connect();
    ok(await call(first, "fred_project_create", { project_name: "one" }));
    ok(await call(first, "fred_project_create", { project_name: "two" }));
    const full = errorOf(await call(first, "fred_project_create", { project_name: "three" }));
    assert.equal(full["error_type"], "QUOTA_EXCEEDED");
    assert.match(String(full["message"]), /your client keeps 2 projects, the most one client may \(2\)/);

    // Another session from the same address is the same client: same projects, same share.
    const second = await connect();
    const names = (ok(await call(second, "fred_project_list", {}))["projects"] as Record<string, unknown>[])
      .map((p) => p["name"]);
    assert.deepEqual(names.sort(), ["one", "two"]);
    ok(
      await call(second, "fred_series", {
        operation: "get_observations",
        series_id: "STUCK",
        project: "one",
      }),
    );
    const busy = errorOf(
      await call(second, "fred_series", {
        operation: "get_observations",
        series_id: "STUCK",
        project: "one",
      }),
    );
    assert.equal(busy["error_type"], "QUOTA_EXCEEDED");
    assert.match(
      String(busy["message"]),
      /your client runs 1 background jobs, the most one client may run at once \(1\)/,
    );
    // Refused before anything was reserved: only the running job's file is being written.
    assert.equal(partialFiles(home).length, 1, partialFiles(home).join(", "));

    // A 2026-07-28 request (no session) from the address is that client too.
    const modern = new Client2({ name: "writes-test", version: "0" }, {
      versionNegotiation: { mode: { pin: MODERN } },
    });
    await modern.connect(new Http2(new URL(`${server.origin}/mcp`)));
    try {
      assert.equal(ok(await call(modern, "fred_job_list", {}))["total"], 1);
    } finally {
      await modern.close().catch(() => {});
    }
  });
});
