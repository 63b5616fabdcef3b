// Global caps no few clients can exhaust (lib/output/storage.ts `#makeRoom`, quota.ts `shareOf`):
// through real SDK clients over the real HTTP server, addresses told by X-Forwarded-For behind a
// trusted proxy. Eleven addresses that each take all the projects they may leave room for a
// twelfth; at a full cap the client holding the most gives way, never a small one. And at
// start-up, clients' projects nobody touched for `quota_reclaim_days` are removed and what
// clients keep counts towards their quota before FRED (loaded on first use) is called.
import assert from "node:assert/strict";
import { startHttpInProcess } from "../../harness/in_process.ts";
import { removeHome, scratchHome } from "../../harness/spawn.ts";
import type { Client } from "../../harness/sdk_client.ts";
import { connectHttp } from "../../harness/provider.ts";
import { FakeUpstream } from "../../fakes/upstream.ts";
import { errorOf, ok } from "../../harness/results.ts";
import { clientHash } from "../../../lib/output/quota.ts";
import { ownerHash } from "../../../lib/output/owner_hash.ts";
import { fredConfig, startFakeFred, TEST_KEY } from "./fake_fred.ts";

const DAY = 86_400_000;

/** Connects one client per address and closes them all at the end. */
function clientsOf(origin: string): { connect(address: string): Promise<Client>; close(): Promise<void> } {
  const all: Client[] = [];
  return {
    connect: async (address) => {
      const { client } = await connectHttp(origin, { "X-Forwarded-For": address });
      all.push(client);
      return client;
    },
    close: async () => {
      for (const c of all) await c.close().catch(() => {});
    },
  };
}

const call = (c: Client, name: string, args: Record<string, unknown>) =>
  c.callTool({ name, arguments: args });

Deno.test("fred global project cap: eleven flooding addresses leave room for a twelfth, and a full cap takes from the biggest holder", async (t) => {
  await using fake = startFakeFred();
  const home = scratchHome(fredConfig(fake.origin));
  const root = `${home}/fred-store`;
  await using _home = { [Symbol.asyncDispose]: () => Promise.resolve(removeHome(home)) };
  await using server = await startHttpInProcess({
    args: ["--providers", "fred"],
    home,
    // A share of 32 / 16 = 2 projects a client, under the quota of 4 each.
    env: {
      MCP_TRUST_PROXY: "true",
      MCP_QUOTA_PROJECTS: "4",
      FRED_MAX_PROJECTS: "32",
      FRED_STORAGE_DIR: root,
    },
  });
  const clients = clientsOf(server.origin);
  try {
    await t.step("eleven addresses each take what they may: their share, not the cap", async () => {
      for (let i = 1; i <= 11; i++) {
        const flooder = await clients.connect(`203.0.113.${i}`);
        for (let p = 1; p <= 4; p++) {
          const r = await call(flooder, "fred_project_create", { project_name: `f${p}` });
          if (p <= 2) ok(r);
          else {
            const e = errorOf(r);
            assert.equal(e["error_type"], "QUOTA_EXCEEDED", JSON.stringify(e));
            assert.match(
              String(e["message"]),
              /keeps 2 projects in this storage, its share \(at most 1\/16 of the 32 projects/,
            );
            assert.match(String(e["hint"]), /FRED_MAX_PROJECTS/);
          }
        }
      }
    });

    await t.step("a twelfth client creates a project and writes a file into it", async () => {
      const newcomer = await clients.connect("198.51.100.12");
      ok(await call(newcomer, "fred_project_create", { project_name: "mine" }));
      ok(
        await call(newcomer, "fred_series", {
          operation: "get_observations",
          series_id: "GNPCA",
          output: "file",
          project: "mine",
        }),
      );
      const files = ok(await call(newcomer, "fred_project_files", { project_name: "mine" }));
      assert.equal(files["total_files"], 1);
    });

    await t.step(
      "at the full cap a small client's project takes the place of the biggest holder's oldest",
      async () => {
        // Five more flooders fill the cap: 11 x 2 + the newcomer's 1 + 4 x 2 + 1 = 32.
        for (let i = 12; i <= 16; i++) {
          const flooder = await clients.connect(`203.0.113.${i}`);
          ok(await call(flooder, "fred_project_create", { project_name: "f1" }));
          if (i < 16) ok(await call(flooder, "fred_project_create", { project_name: "f2" }));
        }
        const small = await clients.connect("198.51.100.99");
        ok(await call(small, "fred_project_create", { project_name: "small" }));
        await server.logged(/project removed to make room/);
        const held = projectsOnDisk(root);
        assert.equal(
          held.get(clientHash("ip:203.0.113.1")),
          1,
          "the first flooder's oldest project gave way",
        );
        assert.equal(held.get(clientHash("ip:203.0.113.2")), 2, "the other flooders keep theirs");
        assert.equal(held.get(clientHash("ip:198.51.100.12")), 1, "the newcomer's one project stays");
        assert.equal(held.get(clientHash("ip:198.51.100.99")), 1);
        assert.equal([...held.values()].reduce((a, b) => a + b, 0), 32, "the cap holds");
      },
    );
  } finally {
    await clients.close();
  }
});

/** Projects on disk by the client their `.project.json` names. */
function projectsOnDisk(root: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const owner of Deno.readDirSync(`${root}/_owners`)) {
    for (const project of Deno.readDirSync(`${root}/_owners/${owner.name}`)) {
      const meta = JSON.parse(
        Deno.readTextFileSync(`${root}/_owners/${owner.name}/${project.name}/.project.json`),
      );
      out.set(meta.client, (out.get(meta.client) ?? 0) + 1);
    }
  }
  return out;
}

/** Plants a client's project as a server wrote it, last touched `ageMs` ago. */
function plant(root: string, address: string, project: string, ageMs: number, bytes = 0): string {
  const client = clientHash(`ip:${address}`);
  const dir = `${root}/_owners/${ownerHash(`planted:${address}`)}/${project}`;
  Deno.mkdirSync(`${dir}/series`, { recursive: true });
  const at = new Date(Date.now() - ageMs);
  Deno.writeTextFileSync(
    `${dir}/.project.json`,
    JSON.stringify({
      name: project,
      owner: "x",
      client,
      description: null,
      created: at,
      updated: at,
      files: {},
    }),
  );
  if (bytes > 0) {
    // Sparse: counted by its size, written in no time.
    using f = Deno.openSync(`${dir}/series/big.csv`, { write: true, create: true });
    f.truncateSync(bytes);
  }
  for (const path of [`${dir}/series/big.csv`, `${dir}/series`, `${dir}/.project.json`, dir]) {
    try {
      Deno.utimeSync(path, at, at);
    } catch {
      // Not planted.
    }
  }
  return dir;
}

Deno.test("serve at start reclaims stale client projects and counts the rest towards each client's quota before FRED loads", async () => {
  await using snl = FakeUpstream.start([{ path: "/api/v1/search", reply: { json: [] } }]);
  const home = scratchHome(
    `providers:\n  fred:\n    api_key: "${TEST_KEY}"\n  snl:\n    base_url: "${snl.origin}"\n    max_retries: 0\n`,
  );
  const root = `${home}/fred-store`;
  const stale = plant(root, "203.0.113.50", "forgotten", 40 * DAY);
  const kept = plant(root, "198.51.100.7", "recent", 60_000, 3 * 1_048_576);
  await using server = await startHttpInProcess({
    args: ["--providers", "fred,snl"],
    home,
    env: {
      MCP_TRUST_PROXY: "true",
      MCP_QUOTA_MB: "2",
      MCP_QUOTA_RECLAIM_DAYS: "30",
      FRED_STORAGE_DIR: root,
    },
  });
  await server.logged(/stale client projects reclaimed.*"removed":1/);
  assert.throws(() => Deno.statSync(stale), Deno.errors.NotFound, "the stale project was removed");
  assert.ok(Deno.statSync(kept).isDirectory, "the recent one stays");
  const clients = clientsOf(server.origin);
  try {
    // FRED is not called: its earlier files count all the same.
    const holder = await clients.connect("198.51.100.7");
    const e = errorOf(await call(holder, "snl-search", { query: "x", output: "file" }));
    assert.equal(e["error_type"], "QUOTA_EXCEEDED", JSON.stringify(e));
    assert.match(String(e["message"]), /your client's files take 3\.\d+ MiB of the 2 MiB/);
    const other = await clients.connect("198.51.100.8");
    ok(await call(other, "snl-search", { query: "x", output: "file" }));
  } finally {
    await clients.close();
  }
});
