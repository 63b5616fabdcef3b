import assert from "node:assert/strict";
import { ChunkedDecoder, RequestFramer, ResponseFramer } from "../../../lib/mcp/http/_http1.ts";
import type { RequestStep } from "../../../lib/mcp/http/_http1.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const STAMP = "x-stamp: peer 192.0.2.1\r\n";

function framer(): RequestFramer {
  return new RequestFramer(STAMP, "x-stamp", 1024);
}

/** Feeds `parts` one after the other; returns the forwarded text, heads and any error. */
function feed(f: RequestFramer, ...parts: string[]): { text: string; methods: string[]; error?: number } {
  let text = "";
  const methods: string[] = [];
  for (const part of parts) {
    const step: RequestStep = f.push(enc.encode(part));
    text += step.forward.map((b) => dec.decode(b)).join("");
    methods.push(...step.heads.map((h) => h.method));
    if (step.error) return { text, methods, error: step.error.status };
  }
  return { text, methods };
}

Deno.test("RequestFramer stamps each head and passes bodies through, whatever the chunking", () => {
  const wire = "POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello" +
    "GET /health HTTP/1.1\r\nHost: a\r\n\r\n";
  const want = "POST /mcp HTTP/1.1\r\n" + STAMP + "Host: a\r\nContent-Length: 5\r\n\r\nhello" +
    "GET /health HTTP/1.1\r\n" + STAMP + "Host: a\r\n\r\n";
  for (const size of [1, 2, 3, 7, wire.length]) {
    const f = framer();
    const parts: string[] = [];
    for (let i = 0; i < wire.length; i += size) parts.push(wire.slice(i, i + size));
    const out = feed(f, ...parts);
    assert.equal(out.text, want, `chunks of ${size}`);
    assert.deepEqual(out.methods, ["POST", "GET"]);
    assert.equal(f.phase, "idle");
  }
});

Deno.test("RequestFramer passes a body with bare line breaks that arrives with its head (pretty-printed JSON)", () => {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }, null, 2);
  const wire = `POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
    "GET /health HTTP/1.1\r\nHost: a\r\n\r\n";
  for (const size of [wire.length, 64, 5]) {
    const parts: string[] = [];
    for (let i = 0; i < wire.length; i += size) parts.push(wire.slice(i, i + size));
    const out = feed(framer(), ...parts);
    assert.equal(out.error, undefined, `chunks of ${size}`);
    assert.deepEqual(out.methods, ["POST", "GET"]);
    assert.ok(out.text.includes(body), "the body passes through whole");
  }
});

Deno.test("RequestFramer follows a chunked body with extensions and trailers", () => {
  const f = framer();
  const body = "4;ext=1\r\nabcd\r\n0\r\nX-Trailer: 1\r\n\r\n";
  const out = feed(f, "POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", ...body.split(""));
  assert.equal(out.error, undefined);
  assert.ok(out.text.endsWith(body));
  assert.equal(f.phase, "idle");
  const next = feed(f, "GET / HTTP/1.1\r\n\r\n");
  assert.deepEqual(next.methods, ["GET"]);
});

Deno.test("RequestFramer drops a stamp header a client sends and skips empty lines before a head", () => {
  const out = feed(framer(), "\r\n\r\nGET / HTTP/1.1\r\nX-Stamp: forged 10.0.0.1\r\nHost: a\r\n\r\n");
  assert.equal(out.text, "GET / HTTP/1.1\r\n" + STAMP + "Host: a\r\n\r\n");
});

Deno.test("RequestFramer refuses framing two parsers could read differently", () => {
  const cases: [string, number][] = [
    ["GET / HTTP/1.1\nHost: a\n\n", 400],
    ["GET / HTTP/1.1\r\nHost: a\rX: 1\r\n\r\n", 400],
    ["GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400],
    ["POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400],
    ["POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", 400],
    ["POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\n", 400],
    ["POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501],
    ["POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400],
    ["GET / HTTP/1.1\r\nBad Name: 1\r\n\r\n", 400],
    ["GET / HTTP/1.1\r\nX: a\u0001b\r\n\r\n", 400],
    ["PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505],
    ["CONNECT a:443 HTTP/1.1\r\n\r\n", 405],
    ["GET /a b HTTP/1.1\r\n\r\n", 400],
    ["POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400],
    ["POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", 400],
    ["POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\nab\r\n", 400],
  ];
  for (const [wire, status] of cases) {
    assert.equal(feed(framer(), wire).error, status, JSON.stringify(wire));
  }
});

Deno.test("RequestFramer refuses a head over its size limit with 431", () => {
  const f = framer();
  const out = feed(f, "GET / HTTP/1.1\r\n", `X: ${"a".repeat(2000)}`);
  assert.equal(out.error, 431);
});

Deno.test("RequestFramer reports a head in progress as partial", () => {
  const f = framer();
  assert.equal(f.partial, false);
  feed(f, "GET / HTT");
  assert.equal(f.phase, "head");
  assert.equal(f.partial, true);
});

Deno.test("ChunkedDecoder ends exactly after the trailer section", () => {
  const bytes = enc.encode("3\r\nabc\r\n0\r\n\r\nNEXT");
  assert.equal(new ChunkedDecoder().feed(bytes, 0), bytes.length - 4);
});

Deno.test("ResponseFramer counts responses, bodiless HEAD answers and Connection: close", () => {
  const r = new ResponseFramer();
  r.expect("HEAD");
  r.expect("GET");
  r.expect("GET");
  assert.equal(r.pending, 3);
  const wire = "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n" +
    "HTTP/1.1 100 Continue\r\n\r\n" +
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n" +
    "HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 2\r\n\r\nno";
  let ended = 0;
  let close = false;
  for (const ch of wire) {
    const step = r.push(enc.encode(ch));
    assert.ok(!("status" in step));
    ended += step.ended;
    close ||= step.close;
    if (ended < 3) assert.equal(close, false);
  }
  assert.equal(ended, 3);
  assert.equal(close, true);
  assert.equal(r.pending, 0);
});

Deno.test("ResponseFramer keeps a response without length open until the connection closes", () => {
  const r = new ResponseFramer();
  r.expect("GET");
  const step = r.push(enc.encode("HTTP/1.1 200 OK\r\n\r\nstream..."));
  assert.ok(!("status" in step));
  assert.equal(step.ended, 0);
  assert.equal(r.pending, 1);
});

Deno.test("ResponseFramer reports a response that is not HTTP/1.1", () => {
  const r = new ResponseFramer();
  r.expect("GET");
  const step = r.push(enc.encode("garbage\r\n\r\n"));
  assert.ok("status" in step);
});
