// The fair-share attacks of `deno task hostile` (targets `fair` and `ipv6`): one client trying
// to push others out (sessions, projects, jobs, stored bytes, job records), slow-body floods
// against /health, and a whole IPv6 /64 acting as many clients. Each attack reports what the
// victim saw. Traffic stays on loopback, or inside a network namespace this run creates and
// removes (`ip netns`, root only), with ULA addresses on its own loopback.
//
// Client addresses: over real sockets bound to a chosen source (127.0.0.x, or the namespace's
// fd30:30::/64 addresses) for the connection guard and the per-address limits; through
// X-Forwarded-For from a trusted proxy for the attacks that need a hundred addresses and MCP
// sessions (the server then takes the client from that header, as behind a load balancer).
import net from "node:net";
import { startHttpServer } from "../../tests/harness/spawn_http.ts";
import { removeHome, scratchHome } from "../../tests/harness/spawn.ts";
import { Client, StreamableHTTPClientTransport } from "../../tests/harness/sdk_client.ts";
import type { Received } from "../../tests/fakes/upstream.ts";
import { fredConfig, startFakeFred, syntheticObservations } from "../../tests/providers/fred/fake_fred.ts";

const POST_HEADERS = { "Content-Type": "application/json", "Accept": "application/json, text/event-stream" };
const INIT = (id: number) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "attacker", version: "0" },
    },
  });
const SLOW_HEAD = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
  "Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n";

/** A real SDK session whose requests say `X-Forwarded-For: address`. */
export async function session(origin: string, address: string): Promise<Client> {
  const client = new Client({ name: "victim", version: "0" }, { capabilities: {} });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
      requestInit: { headers: { "X-Forwarded-For": address } },
    }),
  );
  return client;
}

/** Whether a tool call answered without an error, else its error type (or the failure). */
async function outcome(c: Client, name: string, args: Record<string, unknown>): Promise<string> {
  try {
    const r = await c.callTool({ name, arguments: args });
    if (r.isError !== true) return "ok";
    const blocks = r.content as { type: string; text?: string }[];
    return String(JSON.parse(blocks[1]?.text ?? "{}")["error_type"] ?? "error");
  } catch (e) {
    return `failed (${(e as Error).message.slice(0, 80)})`;
  }
}

/** "3 × ok, 1 × QUOTA_EXCEEDED": how often each value came. */
export function tally(values: (string | number)[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(String(v), (counts.get(String(v)) ?? 0) + 1);
  return [...counts].map(([v, n]) => `${n} × ${v}`).join(", ");
}

/**
 * One HTTP/1.1 request (sent with `Connection: close`) over a socket bound to `local`; resolves
 * to everything the server sent until it closed, or `ms` passed.
 */
export function rawText(
  local: string,
  host: string,
  port: number,
  request: string,
  ms = 10_000,
): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    const socket = net.connect({ host, port, localAddress: local });
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(text);
    };
    const timer = setTimeout(done, ms);
    socket.on("connect", () => socket.write(request));
    socket.on("data", (d) => (text += d.toString("latin1")));
    socket.on("error", done);
    socket.on("close", done);
  });
}

/** The status of {@linkcode rawText}'s answer (0: none). */
export async function rawRequest(
  local: string,
  host: string,
  port: number,
  head: string,
  body = "",
  ms = 10_000,
): Promise<number> {
  return statusOf(await rawText(local, host, port, head + body, ms));
}

function statusOf(text: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
}

/** A socket from `local` that sends a POST head and then a byte every `everyMs`, until closed. */
export function slowBody(
  local: string,
  host: string,
  port: number,
  everyMs: number,
): { close(): void; status: Promise<number> } {
  let text = "";
  let timer: ReturnType<typeof setInterval> | undefined;
  const socket = net.connect({ host, port, localAddress: local });
  const status = new Promise<number>((resolve) => {
    const end = () => {
      clearInterval(timer);
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0));
    };
    socket.on("connect", () => {
      socket.write(SLOW_HEAD + "{");
      timer = setInterval(() => socket.write(" "), everyMs);
    });
    socket.on("data", (d) => (text += d.toString("latin1")));
    socket.on("close", end);
    socket.on("error", end);
  });
  return {
    close: () => {
      clearInterval(timer);
      socket.destroy();
    },
    status,
  };
}

/** `GET /health` from `local`, `n` times 250 ms apart; the statuses. */
async function probes(local: string, host: string, port: number, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    out.push(
      await rawRequest(
        local,
        host,
        port,
        `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
        "",
        5_000,
      ),
    );
    await new Promise((r) => setTimeout(r, 250));
  }
  return out;
}

// --- Sessions ----------------------------------------------------------------------------------

async function sessionEviction(report: string[]): Promise<void> {
  await using server = await startHttpServer({
    args: ["--providers", "example"],
    // The caps the attack is sized for (the defaults grew since: docs/DEPLOYMENT.md).
    env: { MCP_TRUST_PROXY: "true", MCP_MAX_SESSIONS: "100", MCP_MAX_SESSIONS_PER_CLIENT: "10" },
  });
  const victims = await Promise.all([1, 2, 3].map(() => session(server.origin, "198.51.100.1")));
  try {
    // 100 initialize from another address within a second, then 21 addresses × 5, then 100
    // addresses of one /64 × 2: 405 newcomers against max_sessions 100.
    let statuses: number[] = [];
    const phases: string[] = [];
    const send = async (address: string, id: number) => {
      const res = await fetch(`${server.origin}/mcp`, {
        method: "POST",
        headers: { ...POST_HEADERS, "X-Forwarded-For": address },
        body: INIT(id),
      });
      await res.body?.cancel();
      statuses.push(res.status);
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 100 }, (_, i) => send("203.0.113.1", i)));
    const burstS = (performance.now() - t0) / 1000;
    phases.push(`100 initialize from one other address at once (${burstS.toFixed(1)} s): ${tally(statuses)}`);
    statuses = [];
    for (let a = 0; a < 21; a++) {
      for (let i = 0; i < 5; i++) await send(`203.0.113.${10 + a}`, 1000 + a * 5 + i);
    }
    phases.push(`then 21 addresses × 5: ${tally(statuses)}`);
    statuses = [];
    for (let a = 0; a < 100; a++) {
      for (let i = 0; i < 2; i++) await send(`2001:db8::${(a + 1).toString(16)}`, 2000 + a);
    }
    const alive = await Promise.all(victims.map((v) => outcome(v, "example-ping", {})));
    report.push(
      `session eviction by other addresses (max_sessions 100, max_sessions_per_client 10): the victim holds 3 ` +
        `sessions from one address; ${phases.join("; ")}; then 100 addresses of one IPv6 /64 × 2: ` +
        `${tally(statuses)}. The victim's sessions afterwards: ${tally(alive)}`,
    );
  } finally {
    for (const v of victims) await v.close().catch(() => {});
  }
}

// --- Quotas --------------------------------------------------------------------------------------

async function quotaExhaustion(report: string[]): Promise<void> {
  await using fake = startFakeFred();
  const gate = Promise.withResolvers<void>();
  fake.route({
    path: "/fred/series/observations",
    match: (r: Received) => r.url.searchParams.get("series_id") === "SLOWJOB",
    reply: async (r: Received) => {
      const offset = Number(r.url.searchParams.get("offset") ?? 0);
      if (offset > 0) await gate.promise;
      return { json: syntheticObservations(50_000, offset, Number(r.url.searchParams.get("limit"))) };
    },
  });
  fake.route({
    path: "/fred/series/observations",
    match: (r: Received) => r.url.searchParams.get("series_id") === "QUICKJOB",
    reply: (r: Received) => ({
      json: syntheticObservations(
        10_500,
        Number(r.url.searchParams.get("offset") ?? 0),
        Number(r.url.searchParams.get("limit")),
      ),
    }),
  });
  const home = scratchHome(fredConfig(fake.origin));
  try {
    await using server = await startHttpServer({
      args: ["--providers", "fred"],
      home,
      env: { MCP_TRUST_PROXY: "true" },
    });
    const victim = await session(server.origin, "198.51.100.7");
    const hog = await Promise.all([1, 2, 3].map(() => session(server.origin, "203.0.113.66")));
    try {
      // The victim's finished job and project, before the hog starts.
      const started = await victim.callTool({
        name: "fred_series",
        arguments: { operation: "get_observations", series_id: "QUICKJOB" },
      });
      const victimJob = String((started.structuredContent as Record<string, unknown>)["job_id"]);
      for (let i = 0; i < 100; i++) {
        const s = await outcome(victim, "fred_job_status", { job_id: victimJob });
        const view = await victim.callTool({ name: "fred_job_status", arguments: { job_id: victimJob } });
        if (s === "ok" && (view.structuredContent as Record<string, unknown>)["status"] === "completed") {
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      await outcome(victim, "fred_project_create", { project_name: "victim" });

      // Its jobs and files go to one project each session makes first (3 of its 10); then 105
      // projects in a burst.
      for (const h of hog) await outcome(h, "fred_project_create", { project_name: "hogjobs" });
      let t0 = performance.now();
      const projects = await Promise.all(
        Array.from(
          { length: 105 },
          (_, i) => outcome(hog[i % 3]!, "fred_project_create", { project_name: `hog${i}` }),
        ),
      );
      const projectS = (performance.now() - t0) / 1000;
      // 150 quick jobs, one after another (each finishes in a moment): past the record share.
      t0 = performance.now();
      const quick: string[] = [];
      for (let i = 0; i < 150; i++) {
        quick.push(
          await outcome(hog[i % 3]!, "fred_series", {
            operation: "get_observations",
            series_id: "QUICKJOB",
            project: "hogjobs",
          }),
        );
      }
      const jobS = (performance.now() - t0) / 1000;
      await new Promise((r) => setTimeout(r, 1_000));
      let kept = 0;
      for (const h of hog) {
        const listed = await h.callTool({ name: "fred_job_list", arguments: { limit: 1 } }).catch(() =>
          undefined
        );
        kept += Number((listed?.structuredContent as Record<string, unknown> | undefined)?.["total"] ?? 0);
      }
      // 30 long jobs at once.
      const running = await Promise.all(
        Array.from(
          { length: 30 },
          (_, i) =>
            outcome(hog[i % 3]!, "fred_series", {
              operation: "get_observations",
              series_id: "SLOWJOB",
              project: "hogjobs",
            }),
        ),
      );
      // Bytes: 9,000-row files (about 230 KB each) until refused.
      const files: string[] = [];
      for (let i = 0; i < 400 && files.at(-1) !== "QUOTA_EXCEEDED" && files.at(-1) !== "STORAGE_LIMIT"; i++) {
        files.push(
          await outcome(hog[0]!, "fred_series", {
            operation: "get_observations",
            series_id: "QUICKJOB",
            limit: 9_000,
            output: "file",
            project: "hogjobs",
          }),
        );
      }
      const victimSaw = {
        project: await outcome(victim, "fred_project_create", { project_name: "victim2" }),
        file: await outcome(victim, "fred_series", {
          operation: "get_observations",
          series_id: "GNPCA",
          output: "file",
          project: "victim",
        }),
        oldJob: await outcome(victim, "fred_job_status", { job_id: victimJob }),
        newJob: await outcome(victim, "fred_series", { operation: "get_observations", series_id: "SLOWJOB" }),
      };
      report.push(
        `quota exhaustion by one client (3 sessions, one address; defaults: 10 projects, 4 running jobs, ` +
          `100 job records, 100 MiB stored per client): 105 fred_project_create in ${
            projectS.toFixed(1)
          } s ` +
          `got ${tally(projects)}; 150 quick jobs in ${jobS.toFixed(1)} s got ${
            tally(quick)
          }, and the job lists of its 3 sessions ` +
          `then held ${kept} in all; 30 long jobs at once got ${
            tally(running)
          }; 9,000-row files until refused: ` +
          `${tally(files)}. The victim then: new project ${victimSaw.project}, ` +
          `output "file" ${victimSaw.file}, its finished job from before ${victimSaw.oldJob}, a new job ${victimSaw.newJob}`,
      );
    } finally {
      gate.resolve();
      for (const c of [victim, ...hog]) await c.close().catch(() => {});
    }
  } finally {
    removeHome(home);
  }
}

// --- Slow bodies against /health ------------------------------------------------------------------

async function slowBodyFlood(report: string[]): Promise<void> {
  await using server = await startHttpServer({
    args: ["--providers", "example"],
    // The caps the attack is sized for (the defaults grew since: docs/DEPLOYMENT.md).
    env: { MCP_BODY_TIMEOUT: "30", MCP_MAX_CONNECTIONS: "256", MCP_MAX_CONNECTIONS_PER_CLIENT: "32" },
  });
  // 300 POSTs from one address, a byte every 2 s; 8 probes from another address meanwhile.
  let flood = Array.from({ length: 300 }, () => slowBody("127.0.0.2", "127.0.0.1", server.port, 2_000));
  await new Promise((r) => setTimeout(r, 1_000));
  const during = await probes("127.0.0.1", "127.0.0.1", server.port, 8);
  const refused = await Promise.race([
    Promise.all(flood.map((f) => f.status)),
    new Promise<number[]>((r) => setTimeout(() => r([]), 3_000)),
  ]);
  for (const f of flood) f.close();
  const floodStatuses = refused.length ? refused : await Promise.all(flood.map((f) => f.status));
  report.push(
    `slow-body flood from one address: 300 POSTs sending a byte every 2 s (max_connections 256, ` +
      `max_connections_per_client 32): the flood got ${
        tally(floodStatuses.map((s) => s === 0 ? "held open" : s))
      }; ` +
      `/health from another address during it: ${tally(during)}`,
  );
  await new Promise((r) => setTimeout(r, 500));
  // The same from 10 addresses × 30: every slot taken; probes come through the health reserve.
  flood = Array.from(
    { length: 300 },
    (_, i) => slowBody(`127.0.0.${10 + (i % 10)}`, "127.0.0.1", server.port, 2_000),
  );
  await new Promise((r) => setTimeout(r, 1_000));
  const full = await probes("127.0.0.1", "127.0.0.1", server.port, 8);
  const other = await rawRequest(
    "127.0.0.1",
    "127.0.0.1",
    server.port,
    "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
  );
  for (const f of flood) f.close();
  report.push(
    `slow-body flood from 10 addresses × 30 (every connection slot taken): /health probes: ${tally(full)}; ` +
      `a request to / from a new client: ${other} (refused until a slot frees)`,
  );
}

// --- IPv6 /64 (inside a network namespace) ------------------------------------------------------------

/** The attacks run inside the namespace: server on [::], clients bound to ULA addresses. */
export async function ipv6Inside(): Promise<string[]> {
  const report: string[] = [];
  const hostile = Array.from({ length: 100 }, (_, i) => `fd30:30::${(0x100 + i).toString(16)}`);
  const victimAddr = "fd30:31::1";
  {
    await using server = await startHttpServer({
      args: ["--providers", "example", "--host", "::"],
      env: { RATE_LIMIT_ENABLED: "true", RATE_LIMIT_PER_MINUTE: "60" },
    });
    const statuses: number[] = [];
    for (const a of hostile) {
      for (let i = 0; i < 2; i++) {
        statuses.push(
          await rawRequest(
            a,
            "::1",
            server.port,
            "GET / HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n",
          ),
        );
      }
    }
    const victim = await rawRequest(
      victimAddr,
      "::1",
      server.port,
      "GET / HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n",
    );
    report.push(
      `IPv6 /64 against the rate limit (60/min per client): 100 addresses of fd30:30::/64 × 2 requests got ` +
        `${tally(statuses)}; the victim in fd30:31::/64 got ${victim}`,
    );
  }
  {
    await using server = await startHttpServer({
      args: ["--providers", "example", "--host", "::"],
      env: { MCP_BODY_TIMEOUT: "30", MCP_MAX_CONNECTIONS: "256", MCP_MAX_CONNECTIONS_PER_CLIENT: "32" },
    });
    const flood = hostile.flatMap((a) => [0, 1, 2].map(() => slowBody(a, "::1", server.port, 2_000)));
    await new Promise((r) => setTimeout(r, 1_500));
    const during: number[] = [];
    for (let i = 0; i < 8; i++) {
      during.push(
        await rawRequest(
          victimAddr,
          "::1",
          server.port,
          "GET /health HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n",
          "",
          5_000,
        ),
      );
    }
    const victimRoot = await rawRequest(
      victimAddr,
      "::1",
      server.port,
      "GET / HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n",
    );
    const settled = await Promise.race([
      Promise.all(flood.map((f) => f.status)),
      new Promise<number[]>((r) => setTimeout(() => r([]), 2_000)),
    ]);
    for (const f of flood) f.close();
    const statuses = settled.length ? settled : await Promise.all(flood.map((f) => f.status));
    report.push(
      `IPv6 /64 slow-body flood: 100 addresses of fd30:30::/64 × 3 slow POSTs (max_connections_per_client 32 ` +
        `per /64): the flood got ${tally(statuses.map((s) => s === 0 ? "held open" : s))}; the victim in ` +
        `fd30:31::/64: /health ${tally(during)}, / ${victimRoot}`,
    );
  }
  {
    await using server = await startHttpServer({
      args: ["--providers", "example", "--host", "::"],
      env: { MCP_MAX_SESSIONS: "100", MCP_MAX_SESSIONS_PER_CLIENT: "10" },
    });
    // The victim's session, then 100 addresses of the /64 open 3 sessions each.
    const victimInit = await rawRequestBody(victimAddr, server.port, INIT(1));
    const statuses: number[] = [];
    for (const a of hostile) {
      for (let i = 0; i < 3; i++) statuses.push((await rawRequestBody(a, server.port, INIT(i))).status);
    }
    const health = await rawText(
      victimAddr,
      "::1",
      server.port,
      "GET /health HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n",
    );
    const open = /"streamable":(\d+)/.exec(health)?.[1] ?? "?";
    const ping = victimInit.session
      ? (await rawRequestBody(
        victimAddr,
        server.port,
        JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
        victimInit.session,
      )).status
      : 0;
    report.push(
      `IPv6 /64 session flood: 100 addresses of fd30:30::/64 × 3 initialize (max_sessions_per_client 10 per /64): ` +
        `${
          tally(statuses)
        } (the /64 gets room only from its own sessions past their grace); sessions open after: ${open} ` +
        `(10 of the /64 + the victim's); the victim's session in fd30:31::/64 then answered ${ping}`,
    );
  }
  return report;
}

/** A POST /mcp from `local` to [::1]; its status and the session id it names. */
async function rawRequestBody(
  local: string,
  port: number,
  body: string,
  sessionId?: string,
): Promise<{ status: number; session?: string }> {
  const text = await rawText(
    local,
    "::1",
    port,
    `POST /mcp HTTP/1.1\r\nHost: [::1]\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
      `${sessionId ? `Mcp-Session-Id: ${sessionId}\r\nMcp-Protocol-Version: 2025-11-25\r\n` : ""}` +
      `Content-Length: ${new TextEncoder().encode(body).length}\r\nConnection: close\r\n\r\n${body}`,
  );
  const session = /mcp-session-id: ([0-9a-f-]+)/i.exec(text)?.[1];
  return { status: statusOf(text), ...(session ? { session } : {}) };
}

/**
 * Runs {@linkcode ipv6Inside} in a network namespace of its own: loopback up, fd30:30::/64 (100
 * addresses) and fd30:31::1 on it. Needs root and `ip`; otherwise says why it was skipped.
 */
export async function ipv6Attacks(report: string[]): Promise<void> {
  await inNamespace(report, {
    label: "IPv6 /64 attacks",
    addresses: [
      "fd30:31::1/64",
      ...Array.from({ length: 100 }, (_, i) => `fd30:30::${(0x100 + i).toString(16)}/64`),
    ],
    script: new URL(import.meta.url).pathname,
    flag: "--ipv6-inside",
  });
}

/**
 * Runs `script flag` in a network namespace of its own with `addresses` on its loopback, and
 * adds the lines it prints (`{"line": …}` JSON) to `report`. Needs root and `ip`; otherwise says
 * why it was skipped.
 */
export async function inNamespace(
  report: string[],
  run: { label: string; addresses: readonly string[]; script: string; flag: string },
): Promise<void> {
  const ns = `odmcp-hostile-${Deno.pid}`;
  const ip = async (...args: string[]): Promise<boolean> => {
    try {
      return (await new Deno.Command("ip", { args, stdout: "null", stderr: "null" }).output()).success;
    } catch {
      return false;
    }
  };
  if (!(await ip("netns", "add", ns))) {
    report.push(`${run.label}: skipped (creating a network namespace needs root and \`ip netns\`)`);
    return;
  }
  try {
    await ip("-n", ns, "link", "set", "lo", "up");
    for (const a of run.addresses) await ip("-n", ns, "-6", "addr", "add", a, "dev", "lo", "nodad");
    const out = await new Deno.Command("ip", {
      args: ["netns", "exec", ns, Deno.execPath(), "run", "--allow-all", run.script, run.flag],
      stdout: "piped",
      stderr: "inherit",
    }).output();
    const lines = new TextDecoder().decode(out.stdout).split("\n").filter((l) => l.startsWith("{"));
    const got = lines.map((l) => JSON.parse(l) as { line: string }).map((l) => l.line);
    report.push(
      ...(got.length
        ? got
        : [`${run.label}: the run in namespace ${ns} reported nothing (exit ${out.code})`]),
    );
  } finally {
    await ip("netns", "del", ns);
  }
}

/** The fair-share attacks over IPv4 loopback and X-Forwarded-For. */
export async function fairAttacks(report: string[]): Promise<void> {
  for (
    const [name, attack] of [
      ["sessions", sessionEviction],
      ["quotas", quotaExhaustion],
      ["slow bodies", slowBodyFlood],
    ] as const
  ) {
    console.error(`hostile: fair … ${name}`);
    try {
      await attack(report);
    } catch (e) {
      report.push(`${name}: the attack run failed: ${(e as Error).message.slice(0, 300)}`);
    }
  }
}

if (import.meta.main && Deno.args.includes("--ipv6-inside")) {
  for (const line of await ipv6Inside()) console.log(JSON.stringify({ line }));
}
