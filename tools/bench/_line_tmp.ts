import { load } from "./http_edge.ts";
import { startHttpServer } from "../../tests/harness/spawn_http.ts";
const s = await startHttpServer({
  args: ["--providers", "example"],
  env: {
    MCP_MAX_SESSIONS_PER_CLIENT: "10000",
    MCP_MAX_CONNECTIONS_PER_CLIENT: "0",
    RATE_LIMIT_ENABLED: "false",
  },
});
await load({ origin: s.origin, tool: "example-echo", pid: s.child.pid, close: async () => {} }, "2026-07-28");
await new Promise((r) => setTimeout(r, 300));
const lines = s.stderr().split("\n").filter((l) => l.includes("http request"));
console.log(lines.length, lines.at(-1)?.length, lines.at(-1));
const other = s.stderr().split("\n").filter((l) => l && !l.includes("http request"));
console.log(other.length, other.slice(-3).join("\n").slice(0, 1500));
await s[Symbol.asyncDispose]();
