// CPU profile of the server under the edge load.
import { load } from "./http_edge.ts";
const home = await Deno.makeTempDir();
const child = new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", "--inspect=127.0.0.1:9339", "--unstable-lazy-dynamic-imports", "--v8-flags=--max-semi-space-size=2", "/work/main/main.ts", "serve", "--transport", "http", "--host", "127.0.0.1", "--port", "18777", "--providers", "example"],
  env: { HOME: home, MCP_MAX_SESSIONS_PER_CLIENT: "10000", MCP_MAX_CONNECTIONS_PER_CLIENT: "0", RATE_LIMIT_ENABLED: "false", MALLOC_ARENA_MAX: "1" },
  stdout: "null", stderr: "null",
}).spawn();
await new Promise((r) => setTimeout(r, 4000));
const list = await (await fetch("http://127.0.0.1:9339/json/list")).json();
const ws = new WebSocket(list[0].webSocketDebuggerUrl);
await new Promise((r) => ws.onopen = r);
let id = 0;
const pending = new Map<number, (v: any) => void>();
ws.onmessage = (e) => { const m = JSON.parse(e.data); if (m.id && pending.has(m.id)) { pending.get(m.id)!(m.result); pending.delete(m.id); } };
const send = (method: string, params = {}) => new Promise<any>((r) => { const i = ++id; pending.set(i, r); ws.send(JSON.stringify({ id: i, method, params })); });
const target = { origin: "http://127.0.0.1:18777", tool: "example-echo", close: async () => {} };
await load(target as any, (Deno.args[0] ?? "2025-11-25") as any);
await send("Profiler.enable");
await send("Profiler.setSamplingInterval", { interval: 200 });
await send("Profiler.start");
const r = await load(target as any, (Deno.args[0] ?? "2025-11-25") as any);
console.log(r);
const { profile } = await send("Profiler.stop");
Deno.writeTextFileSync("/tmp/prof/last.cpuprofile", JSON.stringify(profile));
const self = new Map<string, number>();
const byUrl = new Map<string, number>();
const dt = profile.timeDeltas; const total = profile.samples.length;
const nodeById = new Map(profile.nodes.map((n: any) => [n.id, n]));
const counts = new Map<number, number>();
for (const s of profile.samples) counts.set(s, (counts.get(s) ?? 0) + 1);
for (const [nid, c] of counts) {
  const n: any = nodeById.get(nid);
  const f = n.callFrame;
  const key = `${f.functionName || "(anon)"} ${f.url.replace(/.*node_modules\/\.deno\//, "nm:").replace("file:///work/main/", "")}:${f.lineNumber}`;
  self.set(key, (self.get(key) ?? 0) + c);
  const u = f.url.replace(/.*node_modules\/\.deno\/([^/]+).*/, "nm:$1").replace("file:///work/main/", "") || f.functionName;
  byUrl.set(u, (byUrl.get(u) ?? 0) + c);
}
const top = (m: Map<string, number>, k: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([n, c]) => `${(100 * c / total).toFixed(1)}% ${n}`).join("\n");
console.log("--- by self\n" + top(self, 45));
console.log("--- by file\n" + top(byUrl, 40));
ws.close();
child.kill("SIGKILL");
