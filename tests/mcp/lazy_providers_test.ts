// Providers served from the generated listings (docs/ARCHITECTURE.md): listed without loading their code,
// loaded on first use, once for every server instance, and answered as an error naming them when
// they cannot be loaded.
import assert from "node:assert/strict";
import { join } from "node:path";
import { errorOf, ok, providerTools } from "../harness/results.ts";
import { removeHome, startStdio } from "../harness/spawn.ts";
import { startHttpInProcess, startInProcess } from "../harness/in_process.ts";
import { Client, StreamableHTTPClientTransport } from "../harness/sdk_client.ts";
import { lazyProvider, loadedTool } from "../../lib/mcp/lazy.ts";
import type { ProviderListing } from "../../lib/mcp/listing.ts";
import { ToolError } from "../../lib/errors.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

function loads(stderr: string): string[] {
  return stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
    .filter((l) => l["msg"] === "provider loaded").map((l) => String(l["provider"]));
}

Deno.test("the server lists every toolset, prompt and template without loading a provider, and loads one on first call, once", async () => {
  await using s = await startInProcess();
  const tools = (await s.client.listTools()).tools;
  assert.ok(providerTools(tools).length >= 25, `every toolset listed: ${tools.length}`);
  assert.ok((await s.client.listPrompts()).prompts.some((p) => p.name === "boj_discovery_flow"));
  assert.ok(
    (await s.client.listResourceTemplates()).resourceTemplates.some((t) => t.name === "boj-parameters"),
  );
  const described = ok(
    await s.client.callTool({ name: "opendata_describe", arguments: { tool: "wikipedia-search" } }),
  );
  assert.equal((described["tool"] as { name: string }).name, "wikipedia-search");

  const calls = await Promise.all(
    [1, 2, 3].map(() => s.client.callTool({ name: "boj_list_databases", arguments: {} })),
  );
  for (const r of calls) assert.notEqual(r.isError, true, JSON.stringify(r.content));
  const prompt = await s.client.getPrompt({ name: "boj_discovery_flow", arguments: {} });
  assert.ok(prompt.messages.length > 0);
  await s.close();
  assert.deepEqual(loads(s.stderr()), ["boj"], "only BOJ was loaded, once, though three calls came at once");
});

Deno.test("server instances share one load: concurrent stateless HTTP requests load the provider once", async () => {
  await using server = await startHttpInProcess({ args: ["--stateless"] });
  const clients = await Promise.all([1, 2, 3, 4].map(async () => {
    const client = new Client({ name: "lazy-test", version: "0" }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
    return client;
  }));
  try {
    const results = await Promise.all(
      clients.map((c) => c.callTool({ name: "boj_get_message_catalog", arguments: {} })),
    );
    for (const r of results) assert.notEqual(r.isError, true, JSON.stringify(r.content));
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
  await server.stop();
  assert.deepEqual(loads(server.stderr()), ["boj"]);
});

Deno.test("a setting a listing depends on, configured otherwise, gets the provider created at start with it", async () => {
  await using s = await startInProcess({
    args: ["--providers", "worldbank"],
    configYaml: "providers:\n  worldbank:\n    file_max_documents: 50\n",
  });
  const search = (await s.client.listTools()).tools.find((t) => t.name === "worldbank_search_documents")!;
  const output = (search.inputSchema.properties as Record<string, { description?: string }>)["output"];
  assert.match(String(output?.description), /≤50\b/, "the description says the configured cap");
  await s.close();
  assert.deepEqual(loads(s.stderr()), [], "created at start, not loaded on first use");
});

function copyTree(from: string, to: string): void {
  Deno.mkdirSync(to, { recursive: true });
  for (const entry of Deno.readDirSync(from)) {
    if (entry.isDirectory) copyTree(join(from, entry.name), join(to, entry.name));
    else if (entry.isFile) Deno.copyFileSync(join(from, entry.name), join(to, entry.name));
  }
}

Deno.test("lazyProvider: a provider that fails to load is a non-retryable error saying why, loaded once; the others serve", async () => {
  const copy = Deno.makeTempDirSync({ prefix: "opendata-mcp-broken-" });
  try {
    for (const file of ["main.ts", "deno.json", "deno.lock"]) {
      Deno.copyFileSync(join(ROOT, file), join(copy, file));
    }
    copyTree(join(ROOT, "lib"), join(copy, "lib"));
    Deno.symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"));
    Deno.writeTextFileSync(
      join(copy, "lib/providers/example/mod.ts"),
      'throw new Error("broken on purpose");\n',
    );
    await using s = await startStdio({
      main: join(copy, "main.ts"),
      args: ["--providers", "example,boj"],
    });
    const tools = providerTools((await s.client.listTools()).tools).map((t) => t.name);
    assert.ok(tools.includes("example-ping"), "listed from its listing");
    for (let attempt = 0; attempt < 2; attempt++) {
      const e = errorOf(await s.client.callTool({ name: "example-ping", arguments: {} }));
      assert.equal(e["error_type"], "INTERNAL_ERROR");
      assert.equal(
        e["message"],
        'The provider "example" could not be loaded: its code failed while loading (Error)',
        "the kind of failure is said; the cause and paths stay in the log",
      );
      assert.ok(!JSON.stringify(e).includes(copy), "no path of the server's files reaches the client");
      assert.equal(e["retryable"], false, "loading again would fail again");
      assert.match(String(e["hint"]), /Reinstall the server/);
    }
    // A tool that answers from the provider's own catalogue, asking no upstream.
    const fine = await s.client.callTool({ name: "boj_get_message_catalog", arguments: {} });
    assert.notEqual(fine.isError, true);
    await s.close();
    const failures = s.stderr().split("\n").filter((l) => l.includes('"provider failed to load"'));
    assert.equal(failures.length, 1, "the failure is kept: the second call does not load again");
    assert.match(failures[0]!, /"provider":"example"/);
    assert.match(failures[0]!, /broken on purpose/, "the log says why");
  } finally {
    removeHome(copy);
  }
});

Deno.test("opendata_search loads the providers whose sources it asks, and only those", async () => {
  await using s = await startInProcess({ args: ["--providers", "example,conformance"] });
  const result = ok(
    await s.client.callTool({ name: "opendata_search", arguments: { query: "hello", sources: ["example"] } }),
  );
  const sources = result["sources"] as { id: string; status: string; hits: unknown[] }[];
  assert.deepEqual(sources.map((x) => [x.id, x.status, x.hits.length]), [["example", "ok", 2]]);
  await s.close();
  assert.deepEqual(loads(s.stderr()), ["example"]);
});

Deno.test("lazyProvider: a module missing from the installation is said so, not retryable, without its path", async () => {
  let loadsTried = 0;
  const provider = lazyProvider("demo", {
    toolsets: [{ name: "demo", description: "Demo" }],
    tools: [{ toolset: "demo", tool: { name: "demo-ping", inputSchema: { type: "object" } } }],
    warnings: [],
  } as unknown as ProviderListing, () => {
    loadsTried++;
    return Promise.reject(
      new TypeError('Module not found "file:///tmp/deno-compile-x/lib/providers/demo/mod.ts"'),
    );
  });
  for (let attempt = 0; attempt < 2; attempt++) {
    const e = await loadedTool(provider.tools[0]!).then(() => undefined, (e) => e);
    assert.ok(e instanceof ToolError);
    assert.equal(
      e.message,
      'The provider "demo" could not be loaded: a module of its code is missing from this installation',
    );
    assert.equal(e.retryable, false);
    assert.ok(!JSON.stringify({ ...e, message: e.message }).includes("/tmp/"), "no path reaches the client");
  }
  assert.equal(loadsTried, 1, "a failed load is kept");
});
