// The default surface and toolsets (docs/TOOLS.md), end to end against the real server (in process): the
// core tools reach every tool, --toolsets and OPENDATA_MCP_TOOLSETS widen the list, and over HTTP
// each request may choose its own (path or header), in both protocol eras and in stateless mode.
import assert from "node:assert/strict";
import { CORE_TOOLS, ok, payloadOf, texts } from "../harness/results.ts";
import { Client as V1Client, StreamableHTTPClientTransport as V1Http } from "../harness/sdk_client.ts";
import { Client, MODERN, StreamableHTTPClientTransport } from "../harness/sdk2_client.ts";
import { FakeUpstream } from "../fakes/upstream.ts";
import { runInProcess, startHttpInProcess, startInProcess } from "../harness/in_process.ts";

const DEFAULT = { OPENDATA_MCP_TOOLSETS: "" };

Deno.test("the default surface lists the three core tools, and they describe and call every other tool", async () => {
  await using fake = FakeUpstream.start([{
    path: "/api/v3/wds",
    reply: { fixture: "worldbank/wds_v3_qterm-post-office_docty-PRWP_rows1_fl-list_observed_trimmed.json" },
  }]);
  await using s = await startInProcess({
    args: ["--providers", "example,worldbank"],
    env: DEFAULT,
    configYaml: `providers:\n  worldbank:\n    base_url: ${fake.origin}/api/v3/wds\n    cache_ttl: 0\n`,
  });
  const { tools } = await s.client.listTools();
  assert.deepEqual(tools.map((t) => t.name), [...CORE_TOOLS]);

  const overview = ok(await s.client.callTool({ name: "opendata_describe", arguments: {} }));
  const sets = overview["toolsets"] as { id: string; tools: string[]; listed: boolean }[];
  assert.deepEqual(sets.map((t) => t.id), ["example", "worldbank"]);
  assert.ok(sets.every((t) => !t.listed), "no provider toolset is listed by default");

  const described = ok(
    await s.client.callTool({
      name: "opendata_describe",
      arguments: { tool: "worldbank_search_documents" },
    }),
  );
  const tool = described["tool"] as {
    listed: boolean;
    input_schema: { properties: Record<string, unknown> };
  };
  assert.equal(tool.listed, false);
  assert.ok("query" in tool.input_schema.properties, "the tool's own input schema is given");

  const args = { query: "post office", limit: 1 };
  const viaCall = await s.client.callTool({
    name: "opendata_call",
    arguments: { tool: "worldbank_search_documents", arguments: JSON.stringify(args) },
  });
  const direct = await s.client.callTool({ name: "worldbank_search_documents", arguments: args });
  assert.equal(viaCall.isError, undefined, texts(viaCall)[0]);
  // Each call fetches anew: only the retrieval time (in the provenance and its citation) differs.
  const timeless = (v: unknown) =>
    JSON.parse(
      JSON.stringify(v).replace(/opendata:\/\/citation\/[\w/-]+/g, "CITATION").replace(
        /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g,
        "TIME",
      ),
    );
  assert.equal(
    (viaCall.structuredContent as { provenance: { sha256: string } }).provenance.sha256.length,
    64,
  );
  assert.deepEqual(
    timeless(viaCall.structuredContent),
    timeless(direct.structuredContent),
    "the result comes back unchanged",
  );
  assert.deepEqual(timeless(viaCall.content), timeless(direct.content));

  const bad = await s.client.callTool({
    name: "opendata_call",
    arguments: { tool: "worldbank_search_documents", arguments: JSON.stringify({ query: "x", limit: 1000 }) },
  });
  assert.equal(bad.isError, true);
  const payload = payloadOf(bad);
  assert.equal(payload.error_type, "VALIDATION_ERROR");
  assert.equal(payload.field, "limit", "validated against the called tool's own schema");

  const notJson = await s.client.callTool({
    name: "opendata_call",
    arguments: { tool: "example-echo", arguments: "{not json" },
  });
  assert.equal(payloadOf(notJson)["field"], "arguments");
  const unknown = await s.client.callTool({
    name: "opendata_call",
    arguments: { tool: "nope", arguments: "{}" },
  });
  assert.equal(payloadOf(unknown)["error_type"], "NOT_FOUND");
  const asObject = await s.client.callTool({
    name: "opendata_call",
    arguments: { tool: "example-echo", arguments: { a: 1 } },
  });
  assert.deepEqual(asObject.structuredContent, { echo: { a: 1 } }, "an object is taken as well as a string");
});

Deno.test("opendata_search asks every source at once and reports a failing and a slow one", async () => {
  await using s = await startInProcess({
    args: ["--providers", "example,conformance"],
    env: { ...DEFAULT, MCP_SEARCH_TIMEOUT: "0.5" },
  });
  const found = ok(
    await s.client.callTool({ name: "opendata_search", arguments: { query: "Oslo", limit: 2 } }),
  );
  const sources = found["sources"] as { id: string; status: string; hits: { next_calls: unknown[] }[] }[];
  assert.deepEqual(sources.map((x) => [x.id, x.status, x.hits.length]), [["example", "ok", 2], [
    "conformance",
    "ok",
    1,
  ]]);
  // example-echo is not listed by default: its next call goes through opendata_call, as given.
  const next = sources[0]!.hits[0]!.next_calls[0] as { tool: string; arguments: Record<string, unknown> };
  assert.equal(next.tool, "opendata_call");
  const followed = await s.client.callTool({ name: next.tool, arguments: next.arguments });
  assert.deepEqual(followed.structuredContent, { echo: { query: "Oslo", hit: 1 } });

  const failing = ok(await s.client.callTool({ name: "opendata_search", arguments: { query: "fail" } }));
  const f = failing["sources"] as { id: string; status: string; error?: string }[];
  assert.deepEqual(f.map((x) => x.status), ["ok", "failed"]);
  assert.match(f[1]!.error!, /failed on purpose/);

  const slow = ok(await s.client.callTool({ name: "opendata_search", arguments: { query: "slow" } }));
  const sl = slow["sources"] as { status: string; error?: string }[];
  assert.deepEqual(sl.map((x) => x.status), ["ok", "timeout"], "the others still answer");

  const one = ok(
    await s.client.callTool({
      name: "opendata_search",
      arguments: { query: "Oslo", sources: ["conformance"] },
    }),
  );
  assert.deepEqual((one["sources"] as { id: string }[]).map((x) => x.id), ["conformance"]);
  const wrong = await s.client.callTool({
    name: "opendata_search",
    arguments: { query: "x", sources: ["nope"] },
  });
  assert.equal(payloadOf(wrong)["field"], "sources");
});

Deno.test("opendata_search cut to the character limit shows fewer hits from every source and says how to get more", async () => {
  await using s = await startInProcess({
    args: ["--providers", "example,conformance"],
    env: { ...DEFAULT, MCP_CHARACTER_LIMIT: "1000" },
  });
  // A long query makes each echo hit long, so two hits of each source do not fit in 1,000 characters.
  const query = "Oslo ".repeat(20).trim();
  const r = await s.client.callTool({ name: "opendata_search", arguments: { query, limit: 10 } });
  const found = ok(r);
  const sources = found["sources"] as { id: string; status: string; hits: unknown[] }[];
  assert.deepEqual(
    sources.map((x) => [x.id, x.status]),
    [["example", "ok"], ["conformance", "ok"]],
    "no source lost",
  );
  const shown = sources[0]!.hits.length;
  assert.equal(shown, 1, "example shows 1 of its 2 hits");
  const next = (found["next_calls"] as { tool: string; arguments: Record<string, unknown> }[])[0]!;
  assert.deepEqual(next, {
    tool: "opendata_search",
    arguments: { query, sources: ["example"], limit: 10 },
    for: "all 10 hits of example",
  }, "the continuation of the cut answer is named");
  assert.match(texts(r)[0]!, /At most \d+ hits per source to stay within the 1000-character limit/);
  assert.doesNotMatch(
    texts(r)[0]!,
    /\[Truncated|shortened/,
    "the search fits itself, not the last-guard cut",
  );
  const one = ok(
    await s.client.callTool({
      name: "opendata_search",
      arguments: { query, limit: 10, sources: ["example"] },
    }),
  );
  const more = (one["sources"] as { hits: unknown[] }[])[0]!.hits.length;
  assert.ok(more > shown, `one source alone has room for more hits: ${more} > ${shown}`);
  const small = ok(
    await s.client.callTool({ name: "opendata_search", arguments: { query: "Oslo", limit: 1 } }),
  );
  assert.equal(small["cut"], undefined, "an answer that fits says nothing about cuts");
});

Deno.test("--toolsets, OPENDATA_MCP_TOOLSETS and the config file's toolsets: list those toolsets besides the core; an unknown one is exit 2", async () => {
  const flag = await runInProcess(["tools", "--providers", "example,worldbank", "--toolsets", "example"], {
    env: DEFAULT,
  });
  assert.equal(flag.code, 0, flag.stderr);
  assert.deepEqual(flag.stdout.split("\n").filter((l) => l && !l.startsWith(" ")), [
    ...CORE_TOOLS,
    "example-ping",
    "example-echo",
  ]);
  const env = await runInProcess(["tools", "--providers", "example,worldbank"], {
    env: { OPENDATA_MCP_TOOLSETS: "worldbank" },
  });
  assert.match(env.stdout, /worldbank_search_documents/);
  assert.doesNotMatch(env.stdout, /example-ping/);
  // The config file's toolsets: applies when neither the flag nor the environment names any.
  const file = await runInProcess(["tools", "--providers", "example,worldbank"], {
    env: DEFAULT,
    configYaml: "toolsets: [worldbank]\n",
  });
  assert.equal(file.code, 0, file.stderr);
  assert.match(file.stdout, /worldbank_search_documents/);
  assert.doesNotMatch(file.stdout, /example-ping/);
  const overridden = await runInProcess([
    "tools",
    "--providers",
    "example,worldbank",
    "--toolsets",
    "example",
  ], {
    env: DEFAULT,
    configYaml: "toolsets: [worldbank]\n",
  });
  assert.doesNotMatch(overridden.stdout, /worldbank_search_documents/, "the flag wins over the file");
  const badFile = await runInProcess(["tools", "--providers", "example"], {
    env: DEFAULT,
    configYaml: "toolsets: [atlantis]\n",
  });
  assert.equal(badFile.code, 2);
  assert.match(badFile.stderr, /Unknown toolset "atlantis".*\(from toolsets in the /);
  const bad = await runInProcess(["tools", "--providers", "example", "--toolsets", "example,atlantis"], {
    env: DEFAULT,
  });
  assert.equal(bad.code, 2);
  assert.match(
    bad.stderr,
    /Unknown toolset "atlantis"; known toolsets: "all", "core", "example" \(from --toolsets\)/,
  );
});

for (const stateless of [false, true]) {
  Deno.test(`HTTP (${stateless ? "stateless" : "stateful"}): each request may choose its toolsets by path or header, in both eras`, async () => {
    await using server = await startHttpInProcess({
      args: ["--providers", "example,worldbank", ...(stateless ? ["--stateless"] : [])],
      env: DEFAULT,
    });
    const names = (tools: { name: string }[]) => tools.map((t) => t.name);

    const modern = new Client({ name: "toolsets", version: "0" }, {
      versionNegotiation: { mode: { pin: MODERN } },
    });
    await modern.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp/example`)));
    assert.deepEqual(names((await modern.listTools()).tools), [
      ...CORE_TOOLS,
      "example-ping",
      "example-echo",
    ]);
    await modern.close();

    // The default list reaches an unlisted tool through opendata_call, in both eras.
    const reach = { tool: "example-echo", arguments: JSON.stringify({ era: "either" }) };
    const modernDefault = new Client({ name: "toolsets", version: "0" }, {
      versionNegotiation: { mode: { pin: MODERN } },
    });
    await modernDefault.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
    assert.deepEqual(names((await modernDefault.listTools()).tools), [...CORE_TOOLS]);
    const viaModern = await modernDefault.callTool({ name: "opendata_call", arguments: reach });
    assert.deepEqual(viaModern.structuredContent, { echo: { era: "either" } });
    await modernDefault.close();
    const legacyDefault = new V1Client({ name: "toolsets-v1", version: "0" });
    await legacyDefault.connect(new V1Http(new URL(`${server.origin}/mcp`)));
    const viaLegacy = await legacyDefault.callTool({ name: "opendata_call", arguments: reach });
    assert.deepEqual(viaLegacy.structuredContent, { echo: { era: "either" } });
    const described = ok(
      await legacyDefault.callTool({
        name: "opendata_describe",
        arguments: { tool: "worldbank_search_documents" },
      }),
    );
    assert.equal((described["tool"] as { listed: boolean }).listed, false);
    await legacyDefault.close();

    const byHeader = new Client({ name: "toolsets", version: "0" }, {
      versionNegotiation: { mode: { pin: MODERN } },
    });
    await byHeader.connect(
      new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`), {
        requestInit: { headers: { "X-MCP-Toolsets": "worldbank" } },
      }),
    );
    assert.ok(names((await byHeader.listTools()).tools).includes("worldbank_get_document_details"));
    await byHeader.close();

    const legacy = new V1Client({ name: "toolsets-v1", version: "0" });
    await legacy.connect(new V1Http(new URL(`${server.origin}/mcp/all`)));
    const all = names((await legacy.listTools()).tools);
    assert.ok(all.includes("example-echo") && all.includes("worldbank_search_documents"), all.join(", "));
    await legacy.close();

    const plain = new V1Client({ name: "toolsets-v1", version: "0" });
    await plain.connect(new V1Http(new URL(`${server.origin}/mcp`)));
    assert.deepEqual(names((await plain.listTools()).tools), [...CORE_TOOLS]);
    // A tool of another toolset is still callable directly (a client may have listed it elsewhere).
    const pong = await plain.callTool({ name: "example-ping", arguments: {} });
    assert.deepEqual(pong.structuredContent, { pong: true });
    await plain.close();

    const unknown = await fetch(`${server.origin}/mcp/atlantis`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Accept": "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    assert.equal(unknown.status, 400);
    assert.match((await unknown.json()).error.message, /Unknown toolset "atlantis"/);
    // Discovery a client tries under the endpoint is no toolset list: 404, as for any unknown path.
    for (
      const tail of [
        ".well-known/openid-configuration",
        ".well-known/oauth-authorization-server",
        ".well-known",
      ]
    ) {
      const wellKnown = await fetch(`${server.origin}/mcp/${tail}`);
      assert.equal(wellKnown.status, 404, tail);
      await wellKnown.body?.cancel();
    }
  });
}

Deno.test("opendata_call carries a tool's input_required round trip in the 2026-07-28 era", async () => {
  await using server = await startHttpInProcess({
    args: ["--providers", "conformance", "--stateless"],
    env: DEFAULT,
  });
  const client = new Client({ name: "mrtr", version: "0" }, {
    versionNegotiation: { mode: { pin: MODERN } },
    capabilities: { elicitation: { form: {} } },
  });
  client.setRequestHandler(
    "elicitation/create",
    () => ({ action: "accept", content: { username: "kari", email: "kari@example.no" } }),
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
  const result = await client.callTool({
    name: "opendata_call",
    arguments: { tool: "test_elicitation", arguments: JSON.stringify({ message: "Who?" }) },
  });
  const first = (result.content as { type: string; text?: string }[])[0];
  assert.match(first?.text ?? "", /User response: action=accept/);
  await client.close();
});
