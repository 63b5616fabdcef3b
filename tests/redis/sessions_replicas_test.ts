// Three real server processes over one real redis-server behind a real HAProxy (round robin, no
// stickiness) serve 2025-11-25 sessions as one server: the SDK v1 and v2 clients' calls land on
// every replica and none fails, an elicitation's answer reaching another replica gets to the
// one waiting for it, the log level follows the session, a DELETE ends it everywhere, a record
// naming another user is refused, a SIGKILLed replica loses no session, and a Redis restart
// under load leaves calls answered (or refused with a retryable error) and the records back.
// Replicas sharing MCP_REQUEST_STATE_KEY serve only the records they signed.
import assert from "node:assert/strict";
import { startHttpServer } from "../harness/spawn_http.ts";
import { startHttpInProcess } from "../harness/in_process.ts";
import type { HttpServerProcess } from "../harness/spawn_http.ts";
import { removeHome, scratchHome } from "../harness/spawn.ts";
import {
  Client as V1Client,
  ElicitRequestSchema,
  SSEClientTransport,
  StreamableHTTPClientTransport as V1Transport,
} from "../harness/sdk_client.ts";
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from "../harness/sdk2_client.ts";
import { startBalancer } from "../harness/balancer.ts";
import { StdioClientTransport } from "../harness/sdk_client.ts";
import { startRedis } from "./_redis_server.ts";
import { digest } from "../../lib/redis/session_store.ts";
import { until } from "../harness/until.ts";

const SESSION_ERA = "2025-11-25";

/**
 * A fetch that notes which replica (HAProxy's X-Served-By) answered each request: only those whose
 * body has `only`, if given.
 */
function tracingFetch(seen: string[], only?: string): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    const by = res.headers.get("x-served-by");
    const body = typeof init?.body === "string" ? init.body : "";
    if (by && (only === undefined || body.includes(only))) seen.push(by);
    return res;
  };
}

function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? "").join("");
}

async function postRaw(origin: string, sessionId: string, body: unknown): Promise<Response> {
  return await fetch(`${origin}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "accept": "application/json, text/event-stream",
      "mcp-session-id": sessionId,
      "mcp-protocol-version": SESSION_ERA,
    },
    body: JSON.stringify(body),
  });
}

/** Nine calls of `client`, every one answered, and answered by all three replicas. */
async function callsSpread(
  client: { callTool(p: { name: string; arguments: Record<string, unknown> }): Promise<unknown> },
  seen: string[],
): Promise<void> {
  for (let i = 0; i < 9; i++) {
    assert.equal(
      textOf(await client.callTool({ name: "test_simple_text", arguments: {} })),
      "This is a simple text response for testing.",
    );
  }
  assert.equal(new Set(seen).size, 3, `answers came from ${[...new Set(seen)].join(", ")}`);
}

const ping = { jsonrpc: "2.0", id: 1, method: "ping" };

Deno.test("three replicas behind HAProxy serve any 2025-11-25 session on any replica", async (t) => {
  await using redis = await startRedis();
  const home = scratchHome();
  await using _home = { [Symbol.asyncDispose]: () => Promise.resolve(removeHome(home)) };
  const options = {
    args: ["--providers", "conformance"],
    home,
    env: { REDIS_URL: redis.url, REDIS_TIMEOUT: "0.5", REDIS_RETRY_MAX: "0.2" },
  };
  const replicas: HttpServerProcess[] = await Promise.all([0, 1, 2].map(() => startHttpServer(options)));
  await using _replicas = {
    [Symbol.asyncDispose]: async () => void await Promise.all(replicas.map((r) => r.stop())),
  };
  await using lb = await startBalancer(replicas.map((r) => r.port));
  const url = new URL(`${lb.origin}/mcp`);

  await t.step("the SDK v1 client's calls are spread over the three replicas and all answered", async () => {
    const seen: string[] = [];
    const client = new V1Client({ name: "v1", version: "1" }, { capabilities: {} });
    await client.connect(new V1Transport(url, { fetch: tracingFetch(seen) }));
    await callsSpread(client, seen);
    await client.close();
  });

  await t.step("a legacy SSE client's stream and messages go to one replica, all answered", async () => {
    const seen: string[] = [];
    const client = new V1Client({ name: "sse", version: "1" }, { capabilities: {} });
    await client.connect(
      new SSEClientTransport(new URL(`${lb.origin}/sse`), {
        fetch: tracingFetch(seen),
        eventSourceInit: { fetch: tracingFetch(seen) },
      }),
    );
    for (let i = 0; i < 6; i++) {
      assert.equal(
        textOf(await client.callTool({ name: "test_simple_text", arguments: {} })),
        "This is a simple text response for testing.",
      );
    }
    assert.equal(new Set(seen).size, 1, `answers came from ${[...new Set(seen)].join(", ")}`);
    await client.close();
  });

  await t.step("the SDK v2 client (legacy mode: 2025-11-25 sessions) likewise", async () => {
    const seen: string[] = [];
    const client = new V2Client({ name: "v2", version: "2" }, { versionNegotiation: { mode: "legacy" } });
    const transport = new V2Transport(url, { fetch: tracingFetch(seen) });
    await client.connect(transport);
    assert.ok(transport.sessionId, "a 2025-11-25 session");
    await callsSpread(client, seen);
    await client.close();
  });

  await t.step(
    "mcp-remote (stdio to Streamable HTTP) keeps one session over the three replicas",
    async () => {
      // Each replica's rebuilds, as "replica session" pairs.
      const restored = (): Set<string> => {
        const pairs = new Set<string>();
        replicas.forEach((r, i) => {
          const lines = r.stderr().split("\n").filter((l) =>
            l.includes('"session restored from the shared store"')
          );
          const ids = lines.map((l) => `${i} ${JSON.parse(l).session_id}`);
          assert.equal(new Set(ids).size, ids.length, `replica ${i} rebuilt a session twice`);
          for (const id of ids) pairs.add(id);
        });
        return pairs;
      };
      // The steps before may have lines still on their way to stderr: each replica's log is
      // caught up once the access line of a request sent now is in (lines keep their order).
      for (const r of replicas) {
        const probes = () =>
          r.stderr().split("\n").filter((l) =>
            l.includes('"msg":"http request"') && l.includes('"path":"/health"')
          )
            .length;
        const seen = probes();
        await (await fetch(`${r.origin}/health`)).body?.cancel();
        await until("the replica's log caught up", () => probes() > seen);
      }
      const before = restored();
      const scratch = Deno.makeTempDirSync({ prefix: "mcp-remote-" });
      const transport = new StdioClientTransport({
        command: Deno.execPath(),
        args: [
          "run",
          "-A",
          "--quiet",
          "npm:mcp-remote@0.15.1",
          url.href,
          "--transport",
          "http-only",
          "--allow-http",
        ],
        env: {
          HOME: scratch,
          PATH: Deno.env.get("PATH") ?? "",
          DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
        },
        stderr: "ignore",
      });
      const client = new V1Client({ name: "via-mcp-remote", version: "1" }, { capabilities: {} });
      try {
        await client.connect(transport);
        await callsSpread(client, ["r0", "r1", "r2"]);
        // A serving replica's log lines reach stderr a moment after the answers they go with.
        const replicasOf = new Map<string, number>();
        let fresh: string[] = [];
        await until("its session rebuilt on the two other replicas", () => {
          fresh = [...restored()].filter((p) => !before.has(p));
          replicasOf.clear();
          for (const p of fresh) {
            replicasOf.set(p.split(" ")[1]!, (replicasOf.get(p.split(" ")[1]!) ?? 0) + 1);
          }
          return [...replicasOf.values()].includes(2);
        }).catch(() => {});
        assert.ok(
          [...replicasOf.values()].includes(2),
          `its session was rebuilt on the two other replicas: ${fresh}`,
        );
      } finally {
        await client.close();
        Deno.removeSync(scratch, { recursive: true });
      }
    },
  );

  await t.step(
    "an elicitation answered through another replica reaches the tool waiting for it",
    async () => {
      const client = new V1Client({ name: "elicit", version: "1" }, { capabilities: { elicitation: {} } });
      client.setRequestHandler(ElicitRequestSchema, () => ({
        action: "accept",
        content: { username: "kari", email: "kari@example.org" },
      }));
      // Which replica took each tools/call and each answer to an elicitation.
      const calls: string[] = [];
      const answers: string[] = [];
      // The POST of an answer may still be in flight when the tool's result arrives on the call's stream.
      const answering: Promise<unknown>[] = [];
      await client.connect(
        new V1Transport(url, {
          fetch: (input, init) => {
            const body = typeof init?.body === "string" ? init.body : "";
            const sent = fetch(input, init);
            const noted = sent.then((res) => {
              const by = res.headers.get("x-served-by") ?? "";
              if (body.includes('"tools/call"')) calls.push(by);
              else if (body.includes('"action":"accept"')) answers.push(by);
            });
            if (body.includes('"action":"accept"')) answering.push(noted);
            return sent;
          },
        }),
      );
      for (let i = 0; i < 3; i++) {
        const result = await client.callTool({ name: "test_elicitation", arguments: { message: "Who?" } });
        assert.match(textOf(result), /action=accept.*kari@example\.org/);
      }
      await Promise.all(answering);
      assert.equal(answers.length, 3);
      assert.ok(
        calls.some((c, i) => answers[i] !== c),
        `an answer reached another replica than its call: calls ${calls}, answers ${answers}`,
      );
      await client.close();
    },
  );

  await t.step(
    "concurrent elicitations of one session on several replicas each get their own answer",
    async () => {
      // Each replica's copy asks the client under its own ids: with ids shared, answers crossed.
      const crossed: string[] = [];
      const ids = new Set<string>();
      for (let round = 0; round < 4; round++) {
        const client = new V1Client({ name: "elicit-many", version: "1" }, {
          capabilities: { elicitation: {} },
        });
        client.setRequestHandler(ElicitRequestSchema, (req, extra) => {
          ids.add(String(extra.requestId));
          return {
            action: "accept",
            content: { username: String(req.params.message), email: "x@example.org" },
          };
        });
        await client.connect(new V1Transport(url));
        const names = ["alpha", "beta", "gamma"];
        const results = await Promise.all(
          names.map((n) =>
            client.callTool({ name: "test_elicitation", arguments: { message: n } }).then(
              textOf,
              (e) => `error ${e}`,
            )
          ),
        );
        names.forEach((n, i) => {
          if (!results[i]!.includes(`"username":"${n}"`)) {
            crossed.push(`round ${round}: ${n} got ${results[i]}`);
          }
        });
        await client.close();
      }
      assert.deepEqual(crossed, []);
      assert.equal(ids.size, 12, `every elicitation had an id of its own: ${[...ids]}`);
    },
  );

  await t.step("the log level set through one replica holds on the others", async () => {
    const logs: string[] = [];
    const client = new V1Client({ name: "levels", version: "1" }, { capabilities: {} });
    client.fallbackNotificationHandler = (n) => {
      if (n.method === "notifications/message") logs.push(String((n.params as { data?: unknown }).data));
      return Promise.resolve();
    };
    await client.connect(new V1Transport(url));
    await client.setLoggingLevel("error");
    for (let i = 0; i < 3; i++) await client.callTool({ name: "test_tool_with_logging", arguments: {} });
    assert.deepEqual(logs, [], "no info message passes an error level on any replica");
    await client.close();
  });

  await t.step("DELETE through one replica ends the session on all of them", async () => {
    const transport = new V1Transport(url);
    const client = new V1Client({ name: "delete", version: "1" }, { capabilities: {} });
    await client.connect(transport);
    const id = transport.sessionId!;
    for (const r of replicas) {
      assert.equal((await postRaw(r.origin, id, ping)).status, 200, "every replica holds it");
    }
    await transport.terminateSession();
    for (const r of replicas) {
      assert.equal((await postRaw(r.origin, id, ping)).status, 404, `${r.origin} dropped it`);
    }
    await client.close();
  });

  await t.step("a record naming another user is not served to this caller", async () => {
    const id = crypto.randomUUID();
    const record = {
      id: digest(id),
      protocolVersion: SESSION_ERA,
      capabilities: {},
      clientInfo: { name: "alice", version: "1" },
      toolsets: [],
      principal: "alice@example.org",
    };
    await redis.command("SET", `opendata-mcp:session:{${digest(id)}}`, JSON.stringify(record));
    const res = await postRaw(replicas[0]!.origin, id, ping);
    assert.equal(res.status, 404);
    assert.match((await res.json()).error.message, /Session not found/);
    // The same record without the principal is served: the refusal was the principal's.
    await redis.command(
      "SET",
      `opendata-mcp:session:{${digest(id)}}`,
      JSON.stringify({ ...record, principal: undefined }),
    );
    assert.equal((await postRaw(replicas[0]!.origin, id, ping)).status, 200);
  });

  await t.step(
    "a SIGKILLed replica loses no session: the next calls are answered by the others",
    async () => {
      const seen: string[] = [];
      const client = new V1Client({ name: "kill", version: "1" }, { capabilities: {} });
      // Only the calls: the GET stream's answer may come in late, from before the kill.
      await client.connect(new V1Transport(url, { fetch: tracingFetch(seen, '"tools/call"') }));
      for (let i = 0; i < 3; i++) await client.callTool({ name: "test_simple_text", arguments: {} });
      await replicas[1]!.stop("SIGKILL");
      seen.length = 0;
      for (let i = 0; i < 6; i++) {
        assert.equal(
          textOf(await client.callTool({ name: "test_simple_text", arguments: {} })),
          "This is a simple text response for testing.",
        );
      }
      assert.ok(!seen.includes("r1"), `no answer from the killed replica: ${seen}`);
      assert.equal(new Set(seen).size, 2, "both survivors answer");
      await client.close();
    },
  );

  await t.step(
    "Redis restarting under load: calls are answered or refused as retryable, records come back",
    async () => {
      const client = new V1Client({ name: "restart", version: "1" }, { capabilities: {} });
      const transport = new V1Transport(url);
      await client.connect(transport);
      const id = transport.sessionId!;
      const key = `opendata-mcp:session:{${digest(id)}}`;
      await redis.stop();
      const outcomes: string[] = [];
      for (let i = 0; i < 6; i++) {
        try {
          await client.callTool({ name: "test_simple_text", arguments: {} });
          outcomes.push("ok");
        } catch (e) {
          assert.match(String(e), /503|shared session store \(Redis\) cannot be reached.*retry/s);
          outcomes.push("retry");
        }
      }
      assert.ok(outcomes.includes("ok"), `some calls answered while Redis is down: ${outcomes.join(",")}`);
      await redis.restart();
      const end = Date.now() + 10_000;
      while (!(await redis.command("EXISTS", key)).startsWith(":1")) {
        if (Date.now() > end) throw new Error("the session record was not written back after the restart");
        await new Promise((r) => setTimeout(r, 50));
      }
      for (let i = 0; i < 4; i++) await client.callTool({ name: "test_simple_text", arguments: {} });
      await client.close();
    },
  );
});

Deno.test("a rebuild that finds the replica full answers the client's own request with the server-full error", async () => {
  await using redis = await startRedis();
  await using server = await startHttpInProcess({
    args: ["--providers", "conformance"],
    env: { REDIS_URL: redis.url, MCP_MAX_SESSIONS: "1" },
  });
  const client = new V1Client({ name: "holder", version: "1" }, { capabilities: {} });
  await client.connect(new V1Transport(new URL(`${server.origin}/mcp`)));
  try {
    const id = crypto.randomUUID();
    const record = {
      id: digest(id),
      protocolVersion: SESSION_ERA,
      capabilities: {},
      clientInfo: {},
      toolsets: [],
    };
    await redis.command("SET", `opendata-mcp:session:{${digest(id)}}`, JSON.stringify(record));
    const res = await postRaw(server.origin, id, { jsonrpc: "2.0", id: 41, method: "ping" });
    assert.equal(res.status, 503);
    const body = await res.json();
    assert.equal(body.id, null, "not the id of the initialize replayed in the client's stead");
    assert.match(body.error.message, /The server is full: all 1 sessions \(MCP_MAX_SESSIONS\)/);
  } finally {
    await client.close();
  }
});

Deno.test("replicas sharing MCP_REQUEST_STATE_KEY serve signed session records and refuse forged ones", async () => {
  await using redis = await startRedis();
  const home = scratchHome();
  await using _home = { [Symbol.asyncDispose]: () => Promise.resolve(removeHome(home)) };
  const options = {
    args: ["--providers", "conformance"],
    home,
    env: { REDIS_URL: redis.url, MCP_REQUEST_STATE_KEY: "s".repeat(40) },
  };
  const [a, b] = await Promise.all([0, 1].map(() => startHttpServer(options))) as [
    HttpServerProcess,
    HttpServerProcess,
  ];
  await using _replicas = { [Symbol.asyncDispose]: async () => void await Promise.all([a.stop(), b.stop()]) };
  const keyOf = (id: string): string => `opendata-mcp:session:{${digest(id)}}`;
  const transport = new V1Transport(new URL(`${a.origin}/mcp`));
  const client = new V1Client({ name: "signed", version: "1" }, { capabilities: {} });
  await client.connect(transport);
  try {
    const id = transport.sessionId!;
    assert.equal(
      (await postRaw(b.origin, id, ping)).status,
      200,
      "the other replica rebuilds the signed record",
    );
    // GET answers a RESP bulk string: "$<length>\r\n<record>\r\n".
    const raw = await redis.command("GET", keyOf(id));
    const genuine = JSON.parse(raw.slice(raw.indexOf("\r\n") + 2, -2));
    assert.match(genuine.sig, /^[0-9a-f]{64}$/);

    // A session id of the forger's choosing, naming another client as its owner: with the genuine
    // record's signature, and without one.
    const chosen = crypto.randomUUID();
    const forged = {
      ...genuine,
      id: digest(chosen),
      owner: "ip:203.0.113.9",
      clientInfo: { name: "victim", version: "1" },
    };
    for (const record of [forged, { ...forged, sig: undefined }]) {
      await redis.command("SET", keyOf(chosen), JSON.stringify(record));
      const res = await postRaw(b.origin, chosen, ping);
      assert.equal(res.status, 404, `refused: ${JSON.stringify(record)}`);
      assert.match((await res.json()).error.message, /Session not found/);
    }
    assert.equal((await postRaw(b.origin, id, ping)).status, 200, "the genuine session is still served");
    // Lines go out in the order they were logged: once that request's access line is in, so is
    // every warning the refusals before it gave.
    const served = (): number =>
      b.stderr().split("\n").filter((l) => l.includes('"msg":"http request"') && l.includes(id)).length;
    await until("the last request's access line", () => served() >= 2);
    const warnings = b.stderr().split("\n").filter((l) => l.includes("session record in Redis refused"));
    assert.equal(warnings.length, 1, "one warning for the record");
    assert.ok(!warnings[0]!.includes(chosen), "without the session id");
  } finally {
    await client.close();
  }
});
