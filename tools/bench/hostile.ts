// `deno task hostile`: a longer hostile-input and load session against the real server over
// stdio, stateful HTTP and stateless HTTP, run on demand (not in CI). It prints what it sent and
// what came of it: crashes, hangs, lost replies (a request that never got an answer), peak RSS,
// latency. Traffic goes to 127.0.0.1 only and every phase is bounded by counts and time.
//
//   deno task hostile [--fuzz-s 20] [--sessions 200] [--calls 50] [--concurrency 16]
//                     [--flood 600] [--nofile 400]
//                     [--targets stdio,http,stateless,fair,ipv6,edge,records,upstream,secrets,compute]
//                     [--seed 1] [--timeout-ms 10000] [--write-docs]
//
// `fair` runs the fair-share attacks (one client against another's sessions, projects, jobs,
// files and job records; slow-body floods against /health) and `ipv6` a whole /64 against the
// per-client limits, inside a network namespace it creates (root only): tools/bench/_fair_attacks.ts.
// `records` many addresses against the global caps and forged Redis records: hostile_records.ts.
// `compute` serves bodies that cost work in proportion to their size (a 600,000-vertex polygon,
// 4 MB of hostile markup, a 7.5-million-character title): tools/bench/hostile_compute.ts.
// `edge` attacks the health reserve, /metrics labels and OAuth bounds: tools/bench/hostile_edge.ts.
//
// With --write-docs the figures replace the "Last hostile run" block of docs/SECURITY.md.
import { parseArgs } from "node:util";
import { hasPrlimit, startHttpServer } from "../../tests/harness/spawn_http.ts";
import type { HttpServerProcess } from "../../tests/harness/spawn_http.ts";
import { childEnv, removeHome, scratchHome, startArgs } from "../../tests/harness/spawn.ts";
import { denoFmt } from "../docs.ts";
import { fairAttacks, ipv6Attacks } from "./_fair_attacks.ts";
import { edgeAttacks } from "./hostile_edge.ts";
import { upstreamAttacks, upstreamReport } from "./hostile_upstream.ts";
import { secretAttacks, secretReport } from "./hostile_secrets.ts";
import { recordAttacks } from "./hostile_records.ts";
import { computeAttacks, computeReport } from "./hostile_compute.ts";

const { values: flags } = parseArgs({
  options: {
    "fuzz-s": { type: "string", default: "20" },
    sessions: { type: "string", default: "200" },
    calls: { type: "string", default: "50" },
    concurrency: { type: "string", default: "16" },
    flood: { type: "string", default: "600" },
    nofile: { type: "string", default: "400" },
    targets: {
      type: "string",
      default: "stdio,http,stateless,fair,ipv6,edge,records,upstream,secrets,compute",
    },
    seed: { type: "string", default: "1" },
    "timeout-ms": { type: "string", default: "10000" },
    "write-docs": { type: "boolean", default: false },
  },
});
const FUZZ_MS = Number(flags["fuzz-s"]) * 1000;
const SESSIONS = Number(flags.sessions);
const CALLS = Number(flags.calls);
const CONCURRENCY = Number(flags.concurrency);
const FLOOD = Number(flags.flood);
const NOFILE = Deno.build.os === "linux" && hasPrlimit() ? Number(flags.nofile) : 0;
const TIMEOUT_MS = Number(flags["timeout-ms"]);
const TARGETS = flags.targets.split(",").map((t) => t.trim()).filter((t) =>
  t !== "upstream" && t !== "secrets" && t !== "compute"
) as (
  | Kind
  | "fair"
  | "ipv6"
  | "records"
  | "edge"
)[];
/** The hostile-upstream and forged-Redis-record attacks (tools/bench/hostile_upstream.ts). */
const UPSTREAM = flags.targets.split(",").some((t) => t.trim() === "upstream");
/** The secret-echo attack: the key in every form in upstream answers (tools/bench/hostile_secrets.ts). */
const SECRETS = flags.targets.split(",").some((t) => t.trim() === "secrets");
/** The work-budget attacks (tools/bench/hostile_compute.ts). */
const COMPUTE = flags.targets.split(",").some((t) => t.trim() === "compute");
/** Settings of the HTTP servers under test: short deadlines keep the run short. */
const HTTP_ENV: Record<string, string> = {
  MCP_HEADER_TIMEOUT: "2",
  MCP_BODY_TIMEOUT: "3",
  MCP_KEEPALIVE_INTERVAL: "2",
  MCP_IDLE_TIMEOUT: "5",
  // The fuzz and load phases come from one address (this process): per-client shares off there,
  // so they measure what they did before; the `fair` and `ipv6` targets attack the shares.
  MCP_MAX_SESSIONS_PER_CLIENT: "0",
  MCP_MAX_CONNECTIONS_PER_CLIENT: "0",
};

type Kind = "stdio" | "http" | "stateless";
type Id = string | number;

const enc = new TextEncoder();
const dec = new TextDecoder();

// --- Hostile input -------------------------------------------------------------------------

/** One hostile message (or batch, or raw bytes) and the ids the server must answer. */
interface Case {
  /** What kind of hostility, for the report. */
  label: string;
  body: string | Uint8Array;
  /** Ids of requests that must get a JSON-RPC response. */
  expect: Id[];
  /** HTTP: headers to send instead of the usual ones. */
  headers?: Record<string, string>;
  /** HTTP: send without the session id. */
  noSession?: boolean;
  /** Send the same bytes twice at once (duplicate ids in flight). */
  twice?: boolean;
  /** Batches are not MCP over stdio (removed in 2025-06-18): only liveness is checked there. */
  batch?: boolean;
}

/** A seeded random source (mulberry32), so a run can be repeated. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let nextId = 1;
function newId(rng: () => number): Id {
  const n = nextId++;
  return rng() < 0.3 ? `h-${n}` : n;
}

function call(id: Id, name: string, args: unknown): Record<string, unknown> {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } };
}

function nested(depth: number, kind: "array" | "object"): string {
  return kind === "array"
    ? "[".repeat(depth) + "]".repeat(depth)
    : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
}

/** The hostile cases, by kind; each call makes a fresh one with new ids. */
const GENERATORS: Record<string, (rng: () => number) => Case> = {
  "malformed JSON": (rng) => {
    const bodies = [
      '{"jsonrpc":"2.0","id":1,"method":"ping"',
      "{{{",
      "null",
      '""',
      '{"jsonrpc":"2.0","id":2,"method":"ping"} trailing',
      "\u0000\u0001",
      "[",
      '{"jsonrpc":"2.0","id":3,"method":"ping",}',
    ];
    return { label: "malformed JSON", body: bodies[Math.floor(rng() * bodies.length)]!, expect: [] };
  },
  "wrong types": (rng) => {
    const id = newId(rng);
    const bodies: [unknown, Id[]][] = [
      [{ jsonrpc: "2.0", id: { x: 1 }, method: "ping" }, []],
      [{ jsonrpc: "2.0", id: [1], method: "ping" }, []],
      [{ jsonrpc: "2.0", id: true, method: "ping" }, []],
      [{ jsonrpc: "2.0", id, method: 42 }, []],
      [{ jsonrpc: "1.0", id, method: "ping" }, []],
      [{ id, method: "ping" }, []],
      [{ jsonrpc: "2.0", id, method: "tools/call", params: "x" }, [id]],
      [{ jsonrpc: "2.0", id, method: "tools/call", params: [1, 2] }, [id]],
      [{ jsonrpc: "2.0", id, method: "tools/call", params: { name: 7 } }, [id]],
      [call(id, "example-ping", "not an object"), [id]],
      [call(id, "example-ping", { unexpected: [1, { deep: null }] }), [id]],
      [call(id, "no-such-tool", {}), [id]],
      [{ jsonrpc: "2.0", id, method: "tools/list", params: { cursor: 12 } }, [id]],
      [{ jsonrpc: "2.0", id, method: "resources/read", params: { uri: "file:///etc/passwd" } }, [id]],
      [{ jsonrpc: "2.0", id, method: "ping", params: { _meta: { progressToken: { a: 1 } } } }, [id]],
    ];
    const [body, expect] = bodies[Math.floor(rng() * bodies.length)]!;
    return { label: "wrong types", body: JSON.stringify(body), expect };
  },
  "odd ids": (rng) => {
    const raw = ["1e309", "-0", "18446744073709551616", "0.5", '"\\u0000"', '""', "-1"];
    const id = raw[Math.floor(rng() * raw.length)]!;
    // The id as the server will echo it after JSON.parse.
    const parsed = JSON.parse(id) as Id;
    const valid = typeof parsed === "string" || Number.isFinite(parsed);
    return {
      label: "odd ids",
      body: `{"jsonrpc":"2.0","id":${id},"method":"ping"}`,
      expect: valid ? [parsed] : [],
    };
  },
  "unknown methods": (rng) => {
    const id = newId(rng);
    const methods = ["foo/bar", "", "rpc.discover", "tools/list/extra", "x".repeat(10_000), "__proto__"];
    const method = methods[Math.floor(rng() * methods.length)]!;
    return { label: "unknown methods", body: JSON.stringify({ jsonrpc: "2.0", id, method }), expect: [id] };
  },
  "huge strings": (rng) => {
    const id = newId(rng);
    const size = [10_000, 200_000, 900_000][Math.floor(rng() * 3)]!;
    return {
      label: "huge strings",
      body: JSON.stringify(call(id, "example-echo", { pad: "x".repeat(size) })),
      expect: [id],
    };
  },
  "oversized bodies": (rng) => {
    const id = newId(rng);
    // Over the default 1 MiB cap: HTTP answers 413, stdio -32600 (and skips the line).
    return {
      label: "oversized bodies",
      body: JSON.stringify(
        call(id, "example-echo", { pad: "y".repeat(1_200_000 + Math.floor(rng() * 1e5)) }),
      ),
      expect: [],
    };
  },
  "deep nesting": (rng) => {
    const id = newId(rng);
    const depth = [10, 1_000, 6_000, 20_000][Math.floor(rng() * 4)]!;
    const kind = rng() < 0.5 ? "array" : "object";
    return {
      label: `deep nesting ${depth}`,
      body: `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call",` +
        `"params":{"name":"example-echo","arguments":{"a":${nested(depth, kind)}}}}`,
      expect: [id],
    };
  },
  "duplicate ids in flight": (rng) => {
    const id = newId(rng);
    return {
      label: "duplicate ids in flight",
      body: JSON.stringify(call(id, "example-echo", { dup: true })),
      expect: [id],
      twice: true,
    };
  },
  "batches": (rng) => {
    const a = newId(rng);
    const b = newId(rng);
    const pick = Math.floor(rng() * 4);
    if (pick === 0) {
      return {
        label: "batches",
        body: JSON.stringify([call(a, "example-ping", {}), { jsonrpc: "2.0", id: b, method: "ping" }]),
        expect: [a, b],
        batch: true,
      };
    }
    if (pick === 1) {
      return {
        label: "batches",
        body: JSON.stringify([{ jsonrpc: "2.0", id: a, method: "ping" }, { bad: true }]),
        expect: [],
        batch: true,
      };
    }
    if (pick === 2) {
      const many = Array.from(
        { length: 101 },
        (_, i) => ({ jsonrpc: "2.0", id: `${a}-${i}`, method: "ping" }),
      );
      return { label: "batches", body: JSON.stringify(many), expect: [], batch: true };
    }
    return {
      label: "batches",
      body: JSON.stringify([{ jsonrpc: "2.0", method: "notifications/initialized" }]),
      expect: [],
      batch: true,
    };
  },
  "notifications that look like requests": (rng) => {
    const bodies = [
      { jsonrpc: "2.0", method: "tools/call", params: { name: "example-ping", arguments: {} } },
      { jsonrpc: "2.0", method: "ping" },
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: newId(rng) } },
      { jsonrpc: "2.0", id: null, method: "ping" },
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: { x: 1 } } },
    ];
    return {
      label: "notifications that look like requests",
      body: JSON.stringify(bodies[Math.floor(rng() * bodies.length)]),
      expect: [],
    };
  },
  "invalid UTF-8": (rng) => {
    const id = newId(rng);
    const head = enc.encode(
      `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call",` +
        `"params":{"name":"example-echo","arguments":{"s":"`,
    );
    const tail = enc.encode('"}}}');
    const bad = [[0xff, 0xfe], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82]][Math.floor(rng() * 4)]!;
    return {
      label: "invalid UTF-8",
      body: new Uint8Array([...head, ...bad, ...tail]),
      // Decoded with replacement characters, it is a valid call.
      expect: [id],
    };
  },
  "lone surrogates and prototype keys": (rng) => {
    const id = newId(rng);
    const bodies = [
      `{"jsonrpc":"2.0","id":${
        JSON.stringify(id)
      },"method":"tools/call","params":{"name":"example-echo","arguments":{"s":"\\ud800"}}}`,
      `{"jsonrpc":"2.0","id":${
        JSON.stringify(id)
      },"method":"tools/call","params":{"name":"example-echo","arguments":{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}}}}}`,
    ];
    return {
      label: "lone surrogates and prototype keys",
      body: bodies[Math.floor(rng() * 2)]!,
      expect: [id],
    };
  },
  "bad headers": (rng) => {
    const id = newId(rng);
    const headerSets: Record<string, string>[] = [
      { "Content-Type": "text/plain", "Accept": "application/json, text/event-stream" },
      { "Content-Type": "application/json" },
      { "Content-Type": "application/json", "Accept": "text/html" },
      {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "X-Big": "z".repeat(40_000),
      },
      {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Origin": "https://evil.example",
      },
      {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Mcp-Protocol-Version": "1999-01-01",
      },
      {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Mcp-Session-Id": "not-a-session",
      },
    ];
    return {
      label: "bad headers",
      body: JSON.stringify({ jsonrpc: "2.0", id, method: "ping" }),
      expect: [],
      headers: headerSets[Math.floor(rng() * headerSets.length)]!,
      noSession: true,
    };
  },
};

// --- Results -------------------------------------------------------------------------------

interface Figures {
  target: Kind;
  sent: number;
  expected: number;
  answered: number;
  lost: Record<string, number>;
  crashes: number;
  hangs: number;
  /** Milliseconds per answered hostile request. */
  latencies: number[];
  load?: { calls: number; errors: number; seconds: number; latencies: number[] };
  attacks: string[];
  peakRssMiB?: number | undefined;
}

function newFigures(target: Kind): Figures {
  return {
    target,
    sent: 0,
    expected: 0,
    answered: 0,
    lost: {},
    crashes: 0,
    hangs: 0,
    latencies: [],
    attacks: [],
  };
}

function lose(f: Figures, label: string, n = 1): void {
  f.lost[label] = (f.lost[label] ?? 0) + n;
}

function pct(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))]!;
}

function peakRssMiB(pid: number): number | undefined {
  try {
    const kb = Number(/VmHWM:\s+(\d+)/.exec(Deno.readTextFileSync(`/proc/${pid}/status`))?.[1]);
    return Number.isFinite(kb) ? kb / 1024 : undefined;
  } catch {
    return undefined;
  }
}

function messagesIn(c: Case): number {
  if (!c.batch || typeof c.body !== "string") return c.twice ? 2 : 1;
  try {
    return (JSON.parse(c.body) as unknown[]).length;
  } catch {
    return 1;
  }
}

// --- stdio ---------------------------------------------------------------------------------

/** The server over stdio, driven with raw lines; answers are matched to requests by id. */
class StdioTarget {
  child!: Deno.ChildProcess;
  #home = scratchHome();
  #writer!: WritableStreamDefaultWriter<Uint8Array>;
  #waiting = new Map<string, ((msg: Record<string, unknown>) => void)[]>();
  #stderr = "";
  exited = false;

  start(): void {
    this.exited = false;
    this.child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...startArgs(this.#home),
        new URL("../../main.ts", import.meta.url).pathname,
        "--providers",
        "example",
        "--log-level",
        "warn",
      ],
      env: childEnv(this.#home),
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    void this.child.status.then(() => {
      this.exited = true;
    });
    void (async () => {
      let pending = "";
      for await (const chunk of this.child.stdout.pipeThrough(new TextDecoderStream())) {
        pending += chunk;
        let nl: number;
        while ((nl = pending.indexOf("\n")) !== -1) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          try {
            const msg = JSON.parse(line) as Record<string, unknown>;
            const key = JSON.stringify(msg["id"] ?? null);
            const queue = this.#waiting.get(key);
            const resolve = queue?.shift();
            if (queue && queue.length === 0) this.#waiting.delete(key);
            resolve?.(msg);
          } catch {
            // Not JSON on stdout: counted by the caller as a protocol breach if it matters.
          }
        }
      }
    })();
    void (async () => {
      for await (const chunk of this.child.stderr.pipeThrough(new TextDecoderStream())) {
        this.#stderr = (this.#stderr + chunk).slice(-20_000);
      }
    })();
  }

  stderrTail(): string {
    return this.#stderr.split("\n").slice(-5).join("\n");
  }

  /** Resolves with the answer to `id`, or null after `ms`. */
  answer(id: Id, ms: number): Promise<Record<string, unknown> | null> {
    const key = JSON.stringify(id);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const queue = this.#waiting.get(key);
        const i = queue?.indexOf(done) ?? -1;
        if (i !== -1) queue!.splice(i, 1);
        resolve(null);
      }, ms);
      const done = (msg: Record<string, unknown>): void => {
        clearTimeout(timer);
        resolve(msg);
      };
      const queue = this.#waiting.get(key) ?? [];
      queue.push(done);
      this.#waiting.set(key, queue);
    });
  }

  /** Writes `body` and its newline in one write, so lines of concurrent callers never mix. */
  async write(body: string | Uint8Array): Promise<void> {
    const bytes = typeof body === "string" ? enc.encode(body) : body;
    const line = new Uint8Array(bytes.length + 1);
    line.set(bytes);
    line[bytes.length] = 0x0a;
    await this.#writer.write(line);
  }

  async request(message: Record<string, unknown>, ms: number): Promise<Record<string, unknown> | null> {
    const answer = this.answer(message["id"] as Id, ms);
    await this.write(JSON.stringify(message)).catch(() => {});
    return await answer;
  }

  async initialize(): Promise<void> {
    const init = await this.request({
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "hostile", version: "0" },
      },
    }, 30_000);
    if (!init) throw new Error(`The stdio server did not initialize:\n${this.stderrTail()}`);
    await this.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  }

  async stop(): Promise<void> {
    try {
      await this.#writer.close();
    } catch {
      // Already closed.
    }
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5_000);
    await this.child.status;
    clearTimeout(timer);
  }

  dispose(): void {
    removeHome(this.#home);
  }
}

async function fuzzStdio(f: Figures, rng: () => number): Promise<void> {
  const target = new StdioTarget();
  target.start();
  await target.initialize();
  const kinds = Object.keys(GENERATORS).filter((k) => k !== "bad headers");
  await hostilePhase(() => checkStdio(f, target), async () => {
    const c = GENERATORS[kinds[Math.floor(rng() * kinds.length)]!]!(rng);
    const expect = c.batch ? [] : c.expect;
    const copies = c.twice ? 2 : 1;
    const answers = expect.flatMap((id) =>
      Array.from({ length: copies }, () => target.answer(id, TIMEOUT_MS))
    );
    const t0 = performance.now();
    for (let i = 0; i < copies; i++) await target.write(c.body).catch(() => {});
    f.sent += messagesIn(c);
    f.expected += answers.length;
    for (const a of await Promise.all(answers)) {
      if (a) {
        f.answered++;
        f.latencies.push(performance.now() - t0);
      } else {
        lose(f, c.label);
      }
    }
  });
  await checkStdio(f, target);
  await loadStdio(f, target);
  f.peakRssMiB = peakRssMiB(target.child.pid);
  await target.stop();
  target.dispose();
}

/**
 * Runs `step` from 8 workers at once for the fuzz duration (a lost reply holds up one worker
 * only), and `check` every 2 s and at the end.
 */
async function hostilePhase(check: () => Promise<void>, step: () => Promise<void>): Promise<void> {
  const until = performance.now() + FUZZ_MS;
  const monitor = (async () => {
    while (performance.now() < until) {
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(2_000, Math.max(0, until - performance.now())))
      );
      await check();
    }
  })();
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (performance.now() < until) await step();
  }));
  await monitor;
}

/** Pings; on no answer, tells a crash (the process ended) from a hang, and restarts. */
async function checkStdio(f: Figures, target: StdioTarget): Promise<void> {
  const pong = target.exited
    ? null
    : await target.request({ jsonrpc: "2.0", id: `alive-${nextId++}`, method: "ping" }, TIMEOUT_MS);
  if (pong) return;
  if (target.exited) {
    f.crashes++;
    console.error(`stdio server crashed:\n${target.stderrTail()}`);
  } else {
    f.hangs++;
    console.error("stdio server stopped answering: restarting it");
    target.child.kill("SIGKILL");
    await target.child.status;
  }
  target.start();
  await target.initialize();
}

async function loadStdio(f: Figures, target: StdioTarget): Promise<void> {
  const total = SESSIONS * CALLS;
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < total) {
      next++;
      const id = `load-${nextId++}`;
      const t = performance.now();
      const res = await target.request(call(id, "example-ping", {}), TIMEOUT_MS);
      latencies.push(performance.now() - t);
      if (!res || !JSON.stringify(res).includes('"pong":true')) errors++;
    }
  }));
  f.load = { calls: total, errors, seconds: (performance.now() - t0) / 1000, latencies };
}

// --- HTTP ----------------------------------------------------------------------------------

const POST_HEADERS = { "Content-Type": "application/json", "Accept": "application/json, text/event-stream" };

async function startHttp(kind: "http" | "stateless"): Promise<HttpServerProcess> {
  return await startHttpServer({
    args: ["--providers", "example", ...(kind === "stateless" ? ["--stateless"] : [])],
    env: HTTP_ENV,
    ...(NOFILE ? { nofile: NOFILE } : {}),
  });
}

/** The JSON-RPC messages of a POST's answer (JSON or an SSE stream), read within `ms`. */
async function readAnswer(res: Response, ms: number): Promise<Record<string, unknown>[] | null> {
  const timer = setTimeout(() => void res.body?.cancel().catch(() => {}), ms);
  try {
    const text = await res.text();
    if (res.headers.get("content-type")?.includes("text/event-stream")) {
      return text.split("\n\n").flatMap((block) => {
        const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim())
          .join("\n");
        return data ? [JSON.parse(data)] : [];
      });
    }
    if (!text) return [];
    const body = JSON.parse(text);
    return Array.isArray(body) ? body : [body];
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

class HttpTarget {
  server!: HttpServerProcess;
  sessions: string[] = [];
  constructor(readonly kind: "http" | "stateless") {}

  #exited = false;

  async start(): Promise<void> {
    this.server = await startHttp(this.kind);
    this.sessions = [];
    this.#exited = false;
    void this.server.child.status.then(() => {
      this.#exited = true;
    });
  }

  get origin(): string {
    return this.server.origin;
  }

  get exited(): boolean {
    return this.#exited;
  }

  async openSession(): Promise<string | undefined> {
    if (this.kind === "stateless") return undefined;
    const res = await fetch(`${this.origin}/mcp`, {
      method: "POST",
      headers: POST_HEADERS,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "hostile", version: "0" },
        },
      }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await res.text();
    const id = res.headers.get("mcp-session-id");
    if (!id) throw new Error(`initialize answered ${res.status} without a session`);
    const done = await fetch(`${this.origin}/mcp`, {
      method: "POST",
      headers: { ...POST_HEADERS, "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25" },
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    await done.body?.cancel();
    return id;
  }

  async session(rng: () => number): Promise<string | undefined> {
    if (this.kind === "stateless") return undefined;
    while (this.sessions.length < 4) this.sessions.push((await this.openSession())!);
    return this.sessions[Math.floor(rng() * this.sessions.length)];
  }

  async post(body: string | Uint8Array, headers: Record<string, string>): Promise<Response> {
    return await fetch(`${this.origin}/mcp`, {
      method: "POST",
      headers,
      body: typeof body === "string" ? body : body.slice().buffer,
      signal: AbortSignal.timeout(TIMEOUT_MS * 2),
    });
  }

  async alive(): Promise<boolean> {
    try {
      const res = await fetch(`${this.origin}/health`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
      await res.body?.cancel();
      return res.status === 200;
    } catch {
      return false;
    }
  }
}

async function fuzzHttp(f: Figures, kind: "http" | "stateless", rng: () => number): Promise<void> {
  const target = new HttpTarget(kind);
  await target.start();
  const kinds = Object.keys(GENERATORS);
  await hostilePhase(() => checkHttp(f, target), async () => {
    const c = GENERATORS[kinds[Math.floor(rng() * kinds.length)]!]!(rng);
    const session = c.noSession ? undefined : await target.session(rng).catch(() => undefined);
    const headers = c.headers ?? {
      ...POST_HEADERS,
      ...(session ? { "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25" } : {}),
    };
    const copies = c.twice ? 2 : 1;
    f.sent += messagesIn(c);
    f.expected += c.expect.length * copies;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: copies }, async () => {
      let res: Response;
      try {
        res = await target.post(c.body, headers);
      } catch {
        // No HTTP answer at all within the bound.
        lose(f, c.label, c.expect.length);
        return;
      }
      if (res.status === 404 && session) target.sessions = target.sessions.filter((s) => s !== session);
      const messages = await readAnswer(res, TIMEOUT_MS);
      for (const id of c.expect) {
        // An HTTP error status with its JSON-RPC error answers the request too.
        const answered = res.status >= 400 ||
          (messages ?? []).some((m) => JSON.stringify(m["id"]) === JSON.stringify(id));
        if (answered) {
          f.answered++;
          f.latencies.push(performance.now() - t0);
        } else {
          lose(f, c.label);
        }
      }
    }));
  });
  await checkHttp(f, target);
  await loadHttp(f, target);
  await checkHttp(f, target);
  if (kind === "http") await attacks(f, target);
  await checkHttp(f, target);
  f.peakRssMiB = peakRssMiB(target.server.child.pid);
  await target.server[Symbol.asyncDispose]();
}

async function checkHttp(f: Figures, target: HttpTarget): Promise<void> {
  if (await target.alive()) return;
  if (target.exited) {
    f.crashes++;
    console.error(
      `${target.kind} server crashed:\n${target.server.stderr().split("\n").slice(-5).join("\n")}`,
    );
  } else {
    f.hangs++;
    console.error(`${target.kind} server stopped answering: restarting it`);
  }
  await target.server[Symbol.asyncDispose]();
  await target.start();
}

async function loadHttp(f: Figures, target: HttpTarget): Promise<void> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < SESSIONS) {
      next++;
      let session: string | undefined;
      try {
        session = await target.openSession();
      } catch {
        errors += CALLS;
        continue;
      }
      const headers = {
        ...POST_HEADERS,
        ...(session ? { "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25" } : {}),
      };
      for (let i = 0; i < CALLS; i++) {
        const t = performance.now();
        try {
          const res = await target.post(JSON.stringify(call(i + 1, "example-ping", {})), headers);
          const text = await res.text();
          latencies.push(performance.now() - t);
          if (res.status !== 200 || !text.includes('\\"pong\\":true') && !text.includes('"pong":true')) {
            errors++;
          }
        } catch {
          errors++;
        }
      }
      if (session) {
        await fetch(`${target.origin}/mcp`, { method: "DELETE", headers: { "Mcp-Session-Id": session } })
          .then((r) => r.body?.cancel()).catch(() => {});
      }
    }
  }));
  f.load = { calls: SESSIONS * CALLS, errors, seconds: (performance.now() - t0) / 1000, latencies };
}

// --- Connection attacks (HTTP) ---------------------------------------------------------------

/** Reads until the server closes `conn` or `ms` pass; true if it closed. */
async function closedWithin(conn: Deno.Conn, ms: number): Promise<{ closed: boolean; text: string }> {
  let text = "";
  const buf = new Uint8Array(4096);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<"expired">((resolve) => {
    timer = setTimeout(() => resolve("expired"), ms);
  });
  try {
    for (;;) {
      const n = await Promise.race([conn.read(buf), expired]);
      if (n === "expired") return { closed: false, text };
      if (n === null) return { closed: true, text };
      text += dec.decode(buf.subarray(0, n));
    }
  } catch {
    return { closed: true, text };
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch {
      // Already closed.
    }
  }
}

/** `GET /health` until it is answered other than 503 ("retry shortly"), at most 20 times. */
async function timedHealth(origin: string): Promise<string> {
  const t0 = performance.now();
  for (let attempt = 1;; attempt++) {
    try {
      const res = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
      await res.body?.cancel();
      if (res.status !== 503 || attempt === 20) {
        const retries = attempt > 1 ? ` after ${attempt - 1} × 503` : "";
        return `${res.status}${retries} in ${(performance.now() - t0).toFixed(0)} ms`;
      }
    } catch (e) {
      return `no answer (${(e as Error).name})`;
    }
  }
}

async function attacks(f: Figures, target: HttpTarget): Promise<void> {
  const port = target.server.port;
  const connect = () => Deno.connect({ hostname: "127.0.0.1", port });
  const partial = enc.encode("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n");

  // 1. Unfinished request heads, more than the process has file descriptors for.
  let t0 = performance.now();
  const flood = await Promise.allSettled(Array.from({ length: FLOOD }, async () => {
    const conn = await connect();
    await conn.write(partial).catch(() => 0);
    return conn;
  }));
  const opened = flood.flatMap((r) => r.status === "fulfilled" ? [r.value] : []);
  const during = await timedHealth(target.origin);
  const ends = await Promise.all(opened.map((c) => closedWithin(c, 30_000)));
  const closed = ends.filter((e) => e.closed).length;
  f.attacks.push(
    `fd flood: ${FLOOD} sockets sending an unfinished head (${opened.length} connected) against ` +
      `${
        NOFILE ? `a ${NOFILE}-descriptor limit` : "no descriptor limit"
      }: /health during the flood ${during}; ` +
      `${closed}/${opened.length} closed by the server within ${
        ((performance.now() - t0) / 1000).toFixed(1)
      } s ` +
      `(${ends.filter((e) => /^HTTP\/1\.1 408/.test(e.text)).length} answered 408); ` +
      `/health after ${await timedHealth(target.origin)}`,
  );

  // 2. Bodies that trickle and stop.
  t0 = performance.now();
  const slow = await Promise.all(Array.from({ length: 50 }, async () => {
    const conn = await connect();
    await conn.write(enc.encode(
      "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
        "Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{",
    ));
    return closedWithin(conn, 30_000);
  }));
  f.attacks.push(
    `slow bodies: 50 connections that stop mid-body: ${slow.filter((s) => s.closed).length}/50 closed ` +
      `(${slow.filter((s) => /^HTTP\/1\.1 408/.test(s.text)).length} after a 408) within ` +
      `${((performance.now() - t0) / 1000).toFixed(1)} s (body_timeout ${HTTP_ENV["MCP_BODY_TIMEOUT"]} s)`,
  );

  // 3. Keep-alive connections left idle after one request.
  t0 = performance.now();
  const idle = await Promise.all(Array.from({ length: 50 }, async () => {
    const conn = await connect();
    await conn.write(enc.encode("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    return closedWithin(conn, 30_000);
  }));
  f.attacks.push(
    `idle keep-alive: 50 connections idle after one request: ${
      idle.filter((s) => s.closed).length
    }/50 closed within ` +
      `${((performance.now() - t0) / 1000).toFixed(1)} s (idle_timeout ${HTTP_ENV["MCP_IDLE_TIMEOUT"]} s)`,
  );

  // 4. Sessions opened and left: more than max_sessions (100), then a new client.
  let refused = 0;
  for (let i = 0; i < 150; i++) {
    const res = await fetch(`${target.origin}/mcp`, {
      method: "POST",
      headers: POST_HEADERS,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: i,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "flood", version: "0" },
        },
      }),
    });
    await res.body?.cancel();
    if (res.status !== 200) refused++;
  }
  let lateComer = "failed";
  try {
    const session = await target.openSession();
    const res = await target.post(JSON.stringify(call(1, "example-ping", {})), {
      ...POST_HEADERS,
      "Mcp-Session-Id": session!,
      "Mcp-Protocol-Version": "2025-11-25",
    });
    lateComer = (await res.text()).includes('"pong":true') ? "served" : `answered ${res.status}`;
  } catch (e) {
    lateComer = `failed (${(e as Error).message})`;
  }
  f.attacks.push(
    `session flood: 150 initialize-only sessions from one client (max_sessions 100): ${refused} refused; ` +
      `a new client afterwards: ${lateComer}`,
  );
}

// --- Run -------------------------------------------------------------------------------------

function report(all: Figures[], fair: string[]): string {
  const rows = all.map((f) => {
    const lost = Object.values(f.lost).reduce((a, b) => a + b, 0);
    const loadRate = f.load ? (f.load.calls / f.load.seconds).toFixed(0) : "-";
    return `| ${f.target} | ${f.sent} | ${f.expected} | ${lost} | ${f.crashes} | ${f.hangs} | ` +
      `${f.peakRssMiB?.toFixed(0) ?? "?"} MiB | ${pct(f.latencies, 0.5).toFixed(1)} / ${
        pct(f.latencies, 0.99).toFixed(1)
      } ms | ` +
      `${
        f.load
          ? `${f.load.calls} calls, ${f.load.errors} errors, ${loadRate}/s, p50 ${
            pct(f.load.latencies, 0.5).toFixed(1)
          } ms, p99 ${pct(f.load.latencies, 0.99).toFixed(1)} ms`
          : "-"
      } |`;
  });
  const lostDetail = all.flatMap((f) =>
    Object.entries(f.lost).map(([label, n]) => `- ${f.target}: ${n} × ${label}`)
  );
  const cpu = (() => {
    try {
      return /model name\s*:\s*(.+)/.exec(Deno.readTextFileSync("/proc/cpuinfo"))?.[1] ?? "unknown CPU";
    } catch {
      return "unknown CPU";
    }
  })();
  return [
    `Run ${
      new Date().toISOString().slice(0, 10)
    } with Deno ${Deno.version.deno} on ${Deno.build.os}/${Deno.build.arch}, ` +
    `${navigator.hardwareConcurrency} cores (${cpu}); seed ${flags.seed}, ${
      FUZZ_MS / 1000
    } s of hostile input per ` +
    `target, load ${SESSIONS} sessions × ${CALLS} calls of example-ping (${CONCURRENCY} at a time); HTTP servers ` +
    `${NOFILE ? `under prlimit --nofile=${NOFILE}, ` : ""}with ${
      Object.entries(HTTP_ENV).map(([k, v]) => `${k}=${v}`).join(", ")
    }.`,
    "",
    "| Target | Messages sent | Requests owed an answer | Lost replies | Crashes | Hangs | Peak RSS | Hostile p50 / p99 | Load |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
    lostDetail.length ? "Lost replies by kind:\n\n" + lostDetail.join("\n") : "No lost replies.",
    "",
    "Connection attacks (stateful HTTP server):",
    "",
    ...all.flatMap((f) => f.attacks.map((a) => `- ${a}`)),
    ...(fair.length
      ? [
        "",
        "Fair-share attacks (what the victim saw; defaults unless said):",
        "",
        ...fair.map((a) => `- ${a}`),
      ]
      : []),
  ].join("\n");
}

const rng = seeded(Number(flags.seed));
const results: Figures[] = [];
const fair: string[] = [];
for (const target of TARGETS) {
  if (target === "fair" || target === "ipv6" || target === "records" || target === "edge") {
    console.error(`hostile: ${target} …`);
    await (target === "fair"
      ? fairAttacks(fair)
      : target === "ipv6"
      ? ipv6Attacks(fair)
      : target === "edge"
      ? edgeAttacks(fair)
      : recordAttacks(fair));
    continue;
  }
  const f = newFigures(target);
  console.error(`hostile: ${target} …`);
  if (target === "stdio") await fuzzStdio(f, rng);
  else await fuzzHttp(f, target, rng);
  results.push(f);
}
const text = report(results, fair);
console.log(text);
// Its own block in docs/SECURITY.md, so either part can be run and recorded alone.
let upstreamText = "";
if (UPSTREAM) {
  console.error("hostile: upstream …");
  upstreamText = upstreamReport(await upstreamAttacks());
  console.log(`\n${upstreamText}`);
}
let secretsText = "";
if (SECRETS) {
  console.error("hostile: secrets …");
  secretsText = secretReport(await secretAttacks());
  console.log(`\n${secretsText}`);
}
let computeText = "";
if (COMPUTE) {
  console.error("hostile: compute …");
  computeText = computeReport(await computeAttacks());
  console.log(`\n${computeText}`);
}
if (flags["write-docs"]) {
  const path = new URL("../../docs/SECURITY.md", import.meta.url);
  let doc = await Deno.readTextFile(path);
  const blocks: [string, string][] = [];
  if (TARGETS.length) blocks.push(["hostile", text]);
  if (UPSTREAM) blocks.push(["hostile-upstream", upstreamText]);
  if (SECRETS) blocks.push(["hostile-secrets", secretsText]);
  if (COMPUTE) blocks.push(["hostile-compute", computeText]);
  for (const [name, content] of blocks) {
    const begin = `<!-- ${name}:begin -->`;
    const end = `<!-- ${name}:end -->`;
    const from = doc.indexOf(begin);
    const to = doc.indexOf(end);
    if (from === -1 || to === -1) throw new Error(`docs/SECURITY.md has no ${begin} … ${end} block`);
    doc = `${doc.slice(0, from + begin.length)}\n\n${content}\n\n${doc.slice(to)}`;
  }
  await Deno.writeTextFile(path, await denoFmt(doc, "md"));
  console.error("Wrote docs/SECURITY.md");
}
