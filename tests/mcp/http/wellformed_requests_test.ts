// Well-formed HTTP/1.1 requests are served through the real connection guard: as raw sockets send
// them (a pretty-printed JSON body in the same packet as its head, pipelined requests,
// `Expect: 100-continue`, a chunked body and a large header), and as the clients people use send
// them: curl (the multi-line example of docs/MCP.md), Node's fetch (undici) with a pretty-printed
// and a streamed (chunked) body, Deno's fetch, and a browser (Debian's chromium). curl and chromium
// are Debian packages `.ci/run` installs; Node comes with the npm that installs Deno.
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { startHttpInProcess } from "../../harness/in_process.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
};

function head(port: number, lines: string[]): string {
  return [
    "POST /mcp HTTP/1.1",
    `Host: 127.0.0.1:${port}`,
    "Content-Type: application/json",
    "Accept: application/json, text/event-stream",
    ...lines,
    "",
    "",
  ].join("\r\n");
}

/** What the server sends on `conn` until `done` says so (or 5 s pass). */
async function readUntil(conn: Deno.Conn, done: (text: string) => boolean): Promise<string> {
  let text = "";
  const buf = new Uint8Array(65_536);
  const deadline = Date.now() + 5_000;
  while (!done(text) && Date.now() < deadline) {
    const timer = setTimeout(() => conn.close(), Math.max(1, deadline - Date.now()));
    const n = await conn.read(buf).catch(() => null);
    clearTimeout(timer);
    if (n === null) break;
    text += dec.decode(buf.subarray(0, n));
  }
  return text;
}

/** Runs `command` with `args` and returns its stdout (asserting it succeeded). */
async function run(command: string, args: string[], stdin?: string): Promise<string> {
  const child = new Deno.Command(command, {
    args,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(enc.encode(stdin));
    await writer.close();
  }
  const out = await child.output();
  const text = dec.decode(out.stdout);
  assert.ok(out.success, `${command} failed: ${dec.decode(out.stderr)} ${text}`);
  return text;
}

/** A Node script posting `INIT` pretty-printed, then as a stream of two parts (chunked). */
const NODE_FETCH = `
const [url, body] = process.argv.slice(1);
const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const pretty = await fetch(url, { method: "POST", headers, body });
const parts = [body.slice(0, 40), body.slice(40)].map((p) => new TextEncoder().encode(p));
const stream = new ReadableStream({ pull(c) { const p = parts.shift(); if (p) c.enqueue(p); else c.close(); } });
const chunked = await fetch(url, { method: "POST", headers, body: stream, duplex: "half" });
console.log(JSON.stringify([pretty.status, (await pretty.text()).includes("serverInfo"),
  chunked.status, (await chunked.text()).includes("serverInfo")]));
`;

const statuses = (text: string) => [...text.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1]));

Deno.test("serve answers well-formed requests as clients send them, through the connection guard", async (t) => {
  await using server = await startHttpInProcess({ args: ["--providers", "example"] });
  const port = server.port;
  const pretty = JSON.stringify(INIT, null, 2);

  await t.step("a pretty-printed JSON body in the same packet as its head", async () => {
    using conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(enc.encode(head(port, [`Content-Length: ${enc.encode(pretty).length}`]) + pretty));
    const text = await readUntil(conn, (s) => s.includes('"serverInfo"'));
    assert.deepEqual(statuses(text), [200], text.slice(0, 300));
  });

  await t.step("two requests pipelined in one write", async () => {
    using conn = await Deno.connect({ hostname: "127.0.0.1", port });
    const body = JSON.stringify(INIT);
    await conn.write(
      enc.encode(
        head(port, [`Content-Length: ${body.length}`]) + body +
          `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`,
      ),
    );
    const text = await readUntil(conn, (s) => statuses(s).length >= 2 && s.includes('"status"'));
    assert.deepEqual(statuses(text), [200, 200], text.slice(0, 300));
  });

  await t.step("Expect: 100-continue, the body sent after the interim answer", async () => {
    using conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(enc.encode(head(port, [`Content-Length: ${pretty.length}`, "Expect: 100-continue"])));
    const interim = await readUntil(conn, (s) => /^HTTP\/1\.1 100/m.test(s));
    assert.match(interim, /^HTTP\/1\.1 100/m);
    await conn.write(enc.encode(pretty));
    const text = await readUntil(conn, (s) => s.includes('"serverInfo"'));
    assert.match(text, /^HTTP\/1\.1 200/m, text.slice(0, 300));
  });

  await t.step("a chunked body with a large header", async () => {
    using conn = await Deno.connect({ hostname: "127.0.0.1", port });
    const half = Math.floor(pretty.length / 2);
    const chunk = (s: string) => `${enc.encode(s).length.toString(16)}\r\n${s}\r\n`;
    await conn.write(
      enc.encode(
        head(port, ["Transfer-Encoding: chunked", `X-Trace: ${"a".repeat(6_000)}`]) +
          chunk(pretty.slice(0, half)) + chunk(pretty.slice(half)) + "0\r\n\r\n",
      ),
    );
    const text = await readUntil(conn, (s) => s.includes('"serverInfo"'));
    assert.deepEqual(statuses(text), [200], text.slice(0, 300));
  });

  await t.step({
    name: "curl with the multi-line JSON body of docs/MCP.md",
    fn: async () => {
      const out = await run("curl", [
        "-sS",
        "-o",
        "-",
        "-w",
        "\n%{http_code}",
        "-H",
        "Content-Type: application/json",
        "-H",
        "Accept: application/json, text/event-stream",
        "--data-binary",
        "@-",
        `http://127.0.0.1:${port}/mcp`,
      ], pretty);
      assert.equal(out.trim().split("\n").at(-1), "200", out.slice(0, 300));
      assert.match(out, /"serverInfo"/);
    },
  });

  await t.step({
    name: "Node's fetch (undici): pretty-printed and streamed bodies",
    fn: async () => {
      const out = await run("node", [
        "--input-type=module",
        "-e",
        NODE_FETCH,
        `http://127.0.0.1:${port}/mcp`,
        pretty,
      ]);
      assert.deepEqual(JSON.parse(out), [200, true, 200, true]);
    },
  });

  await t.step("Deno's fetch with a pretty-printed body", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: pretty,
    });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /"serverInfo"/);
  });

  await t.step({
    name: "a browser's fetch from a page of the server's own origin",
    fn: async () => {
      const browser = await chromium.launch({
        executablePath: "/usr/bin/chromium",
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
      });
      try {
        const page = await browser.newPage();
        await page.goto(`http://127.0.0.1:${port}/health`);
        const got = await page.evaluate(async (body: string) => {
          const res = await fetch("/mcp", {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
            body,
          });
          return [res.status, await res.text()] as const;
        }, pretty);
        assert.equal(got[0], 200, got[1]);
        assert.match(got[1], /"serverInfo"/);
      } finally {
        await browser.close();
      }
    },
  });
});
