// LineStdioTransport: lines split across reads, bad lines answered, the end of input, a failing
// read and a failing write all closing the transport. (Whole servers over stdio are tested
// in tests/e2e and tests/mcp/hostile_core_test.ts.)
import assert from "node:assert/strict";
import { LineStdioTransport } from "../../lib/mcp/stdio_transport.ts";
import type { ByteReader, ByteWriter } from "../../lib/mcp/stdio_transport.ts";

/** A reader handing out `chunks` one per read, then the end (or `failure`). */
function reader(chunks: string[], failure?: Error): ByteReader {
  const encoder = new TextEncoder();
  let next = 0;
  return {
    read(p) {
      if (next < chunks.length) {
        const bytes = encoder.encode(chunks[next++]!);
        p.set(bytes);
        return Promise.resolve(bytes.length);
      }
      return failure ? Promise.reject(failure) : Promise.resolve(null);
    },
  };
}

function sink(lines: string[]): ByteWriter {
  const decoder = new TextDecoder();
  return {
    writeSync(p) {
      lines.push(...decoder.decode(p).split("\n").filter(Boolean));
      return p.length;
    },
  };
}

Deno.test("LineStdioTransport joins a message split across reads, answers a bad line, and closes at the end of input", async () => {
  const written: string[] = [];
  const transport = new LineStdioTransport({
    stdin: reader([
      '{"jsonrpc":"2.0","id":1,"me',
      'thod":"ping"}\n{"not json\n',
      '{"jsonrpc":"2.0","method":"x"}\n',
    ]),
    stdout: sink(written),
    // Nothing here answers the ping: without this the end of input would wait out the 10 s grace.
    drainMs: 0,
  });
  const received: unknown[] = [];
  transport.onmessage = (m) => received.push(m);
  let closed = false;
  transport.onclose = () => closed = true;
  await transport.start();
  await transport.closed;
  assert.deepEqual(received, [
    { jsonrpc: "2.0", id: 1, method: "ping" },
    { jsonrpc: "2.0", method: "x" },
  ]);
  assert.equal(written.length, 1);
  assert.equal(JSON.parse(written[0]!).error.code, -32700);
  assert.ok(closed, "onclose was called");
});

Deno.test("LineStdioTransport reports a failing read and closes", async () => {
  const transport = new LineStdioTransport({
    stdin: reader(['{"jsonrpc":"2.0","id":1,"method":"ping"}\n'], new Deno.errors.BrokenPipe("stdin broke")),
    stdout: sink([]),
  });
  const errors: string[] = [];
  transport.onerror = (e) => errors.push(e.message);
  let messages = 0;
  transport.onmessage = () => messages++;
  await transport.start();
  await transport.closed;
  assert.equal(messages, 1);
  assert.deepEqual(errors, ["stdin broke"]);
});

Deno.test("LineStdioTransport closed while a read waits ignores what that read brings", async () => {
  const pending = Promise.withResolvers<number | null>();
  let target: Uint8Array | undefined;
  const transport = new LineStdioTransport({
    stdin: {
      read(p) {
        target = p;
        return pending.promise;
      },
    },
    stdout: sink([]),
  });
  let messages = 0;
  let closes = 0;
  transport.onmessage = () => messages++;
  transport.onclose = () => closes++;
  await transport.start();
  await transport.close();
  await transport.closed;
  const late = new TextEncoder().encode('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  target!.set(late);
  pending.resolve(late.length);
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(messages, 0, "nothing is delivered after close()");
  assert.equal(closes, 1, "onclose is called once");
});

Deno.test("LineStdioTransport ends the session quietly when the client stops reading its answers", async () => {
  let reads = 0;
  const outputErrors: string[] = [];
  const transport = new LineStdioTransport({
    stdin: {
      read(p) {
        // One request, then input stays open: only the failed answer ends the session.
        if (reads++ > 0) return new Promise<number | null>(() => {});
        const bytes = new TextEncoder().encode('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
        p.set(bytes);
        return Promise.resolve(bytes.length);
      },
    },
    stdout: {
      writeSync() {
        throw new Deno.errors.BrokenPipe("Broken pipe (os error 32)");
      },
    },
    onOutputError: (e) => outputErrors.push(e.message),
  });
  transport.onmessage = (m) => {
    if ("id" in m) void transport.send({ jsonrpc: "2.0", id: m.id, result: {} } as never);
  };
  await transport.start();
  await transport.closed;
  assert.deepEqual(outputErrors, ["Broken pipe (os error 32)"]);
  await transport.send({ jsonrpc: "2.0", id: 2, result: {} } as never);
  assert.deepEqual(outputErrors.length, 1, "nothing is written, or reported, after the session ended");
});
