// The health reserve against the red team's squatters (docs/SECURITY.md, "Connection guard"):
// several loopback addresses fill every connection slot with slow bodies and keep connections
// that send nothing open over the cap, reconnecting as soon as one is closed or refused; a
// victim's /health on fresh connections must still be answered. Real sockets bound to
// 127.0.0.x against the server served in process behind its connection guard.
import assert from "node:assert/strict";
import net from "node:net";
import { startHttpInProcess } from "../../harness/in_process.ts";

/** The head of a POST whose 1,000-byte body will never finish arriving. */
const SLOW_POST = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
  "Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{";
const HEALTH = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
const ROOT = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";

/** A TCP connection to `port` from loopback address `local`, once connected. */
function connectFrom(local: string, port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port, localAddress: local });
    socket.once("connect", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Sends `request` from `local` and resolves to the answer's status (0: none) once closed. */
function statusOf(local: string, port: number, request: string): Promise<number> {
  return new Promise((resolve) => {
    let text = "";
    const socket = net.connect({ host: "127.0.0.1", port, localAddress: local });
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0));
    };
    const timer = setTimeout(done, 10_000);
    socket.on("connect", () => socket.write(request));
    socket.on("data", (d) => (text += d.toString("latin1")));
    socket.on("close", done);
    socket.on("error", done);
  });
}

/**
 * A connection from `local` that sends nothing, opened again `againMs` after the server closes
 * or refuses it, until stopped; `opened` counts its connections.
 */
function squatter(local: string, port: number, againMs: number): { stop(): void; opened(): number } {
  let stopped = false;
  let opened = 0;
  let socket: net.Socket | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const open = () => {
    if (stopped) return;
    opened++;
    socket = net.connect({ host: "127.0.0.1", port, localAddress: local });
    socket.on("error", () => {});
    // Reads (and drops) what the server answers, so a refusal's close is seen at once.
    socket.resume();
    socket.on("close", () => {
      if (!stopped) timer = setTimeout(open, againMs);
    });
  };
  open();
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
      socket?.destroy();
    },
    opened: () => opened,
  };
}

/**
 * Fills every regular slot of the server at `port` with 4 slow bodies from each of `addresses`
 * (each at its share of 4), until a new client's ordinary request is refused; the sockets.
 */
async function fillEverySlot(port: number, addresses: readonly string[]): Promise<net.Socket[]> {
  const flood: net.Socket[] = [];
  for (const a of addresses) {
    for (let i = 0; i < 4; i++) {
      const s = await connectFrom(a, port);
      s.on("error", () => {});
      s.write(SLOW_POST);
      flood.push(s);
    }
  }
  // The guard counts what it accepted: ask until it says full.
  let root = 0;
  for (const until = Date.now() + 10_000; Date.now() < until && root !== 503;) {
    root = await statusOf("127.0.0.1", port, ROOT);
  }
  assert.equal(root, 503, "the flood fills every regular slot");
  return flood;
}

/** Once every squatter came back twice (answered, refused or closed), 12 probes from 127.0.0.1. */
async function probesAmid(port: number, squatters: ReturnType<typeof squatter>[]): Promise<number[]> {
  for (const until = Date.now() + 10_000; Date.now() < until;) {
    if (squatters.every((s) => s.opened() >= 3)) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const probes: number[] = [];
  for (let i = 0; i < 12; i++) probes.push(await statusOf("127.0.0.1", port, HEALTH));
  return probes;
}

const SERVER_ENV = { MCP_MAX_CONNECTIONS_PER_CLIENT: "4", MCP_BODY_TIMEOUT: "60" };

Deno.test("serveHttp() answers /health from the reserve while slow bodies and silent squatters from eight addresses hold every slot", async () => {
  await using server = await startHttpInProcess({
    args: ["--providers", "example"],
    env: { ...SERVER_ENV, MCP_MAX_CONNECTIONS: "32" },
  });
  const addresses = Array.from({ length: 8 }, (_, i) => `127.0.0.${10 + i}`);
  const squatters: ReturnType<typeof squatter>[] = [];
  const flood = await fillEverySlot(server.port, addresses);
  try {
    // Then 2 squatters per address (16, more than the old reserve of 8 held), reconnecting 20 ms
    // after each close or refusal, and 4 more from 2 addresses that hold no regular slot.
    for (const a of addresses) for (let i = 0; i < 2; i++) squatters.push(squatter(a, server.port, 20));
    for (const a of ["127.0.0.30", "127.0.0.31"]) {
      for (let i = 0; i < 2; i++) squatters.push(squatter(a, server.port, 20));
    }
    const probes = await probesAmid(server.port, squatters);
    assert.deepEqual(probes, Array(12).fill(200), "every probe on a fresh connection is answered");
    // The reserve serves probes only: the victim's other requests wait for a regular slot.
    assert.equal(await statusOf("127.0.0.1", server.port, ROOT), 503);
  } finally {
    for (const s of squatters) s.stop();
    for (const s of flood) s.destroy();
  }
});

Deno.test("serveHttp() answers /health from the reserve while squatters from eight addresses without a regular slot hammer it", async () => {
  await using server = await startHttpInProcess({
    args: ["--providers", "example"],
    env: { ...SERVER_ENV, MCP_MAX_CONNECTIONS: "8" },
  });
  const squatters: ReturnType<typeof squatter>[] = [];
  const flood = await fillEverySlot(server.port, ["127.0.0.10", "127.0.0.11"]);
  try {
    // 8 other addresses × 3 silent connections, each back 5 ms after a close or refusal: more
    // than the reserve holds, from clients that hold no regular slot, as the victim.
    for (let a = 0; a < 8; a++) {
      for (let i = 0; i < 3; i++) squatters.push(squatter(`127.0.0.${40 + a}`, server.port, 5));
    }
    const probes = await probesAmid(server.port, squatters);
    assert.deepEqual(probes, Array(12).fill(200), "every probe on a fresh connection is answered");
  } finally {
    for (const s of squatters) s.stop();
    for (const s of flood) s.destroy();
  }
});
