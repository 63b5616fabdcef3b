// Well-formed HTTP/1.1 requests as curl, Node's fetch and browsers send them are served through the
// real connection guard (a raw socket to `serve` in this process): a pretty-printed JSON body in
// the same packet as its head, pipelined requests, `Expect: 100-continue`, a chunked body and a
// large header.
import assert from "node:assert/strict";
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
});
