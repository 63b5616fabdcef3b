// docker-compose.replicas.yml and deploy/haproxy.cfg: N replicas behind HAProxy, round robin and
// no stickiness, Redis required. HAProxy itself checks the config (`haproxy -c`); Docker is not
// run here.
import assert from "node:assert/strict";
import { parse as parseYaml } from "yaml";
import { HAPROXY } from "./harness/balancer.ts";

const ROOT = new URL("../", import.meta.url);

Deno.test("docker-compose.replicas.yml: scaled replicas behind an HAProxy balancer, Redis required", () => {
  const compose = parseYaml(Deno.readTextFileSync(new URL("docker-compose.replicas.yml", ROOT)), {
    customTags: [{ tag: "!reset", collection: "seq", resolve: () => "!reset" }],
  }) as { services: Record<string, Record<string, unknown>> };
  const server = compose.services["mcp-server"]!;
  assert.equal(server["ports"], "!reset", "the replicas publish no port of their own");
  assert.match(String((server["deploy"] as Record<string, unknown>)["replicas"]), /MCP_REPLICAS:-3/);
  const env = server["environment"] as Record<string, string>;
  assert.equal(env["REDIS_URL"], "redis://redis:6379");
  assert.match(env["MCP_REQUEST_STATE_KEY"]!, /^\$\{MCP_REQUEST_STATE_KEY:\?/);
  assert.equal(compose.services["redis"]!["profiles"], "!reset");
  const balancer = compose.services["balancer"]!;
  assert.deepEqual(balancer["ports"], ["127.0.0.1:8000:8000"]);
  assert.deepEqual(balancer["volumes"], ["./deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro"]);
});

Deno.test("deploy/haproxy.cfg is valid for HAProxy: /mcp round robin with no stickiness, legacy SSE by client address", async () => {
  const path = new URL("deploy/haproxy.cfg", ROOT).pathname;
  const check = await new Deno.Command(HAPROXY, {
    args: ["-c", "-f", path],
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  assert.ok(check.success, new TextDecoder().decode(check.stderr));
  const text = Deno.readTextFileSync(path);
  const backend = (name: string): string =>
    text.split(/^backend /m).find((b) => b.startsWith(`${name}\n`)) ?? "";
  // /mcp (the default backend) needs no stickiness: any replica serves any session.
  assert.match(text, /^\s*default_backend replicas$/m);
  assert.match(backend("replicas"), /^\s*balance roundrobin$/m);
  assert.doesNotMatch(
    backend("replicas"),
    /^\s*(stick|cookie|hash-type|balance (source|hdr))/m,
    "no stickiness",
  );
  // A legacy SSE session is its one stream: its /sse and /message go to one replica.
  assert.match(text, /^\s*use_backend legacy_sse if \{ path \/sse \/message \}$/m);
  assert.match(backend("legacy_sse"), /^\s*balance source$/m);
  assert.match(text, /server-template mcp \d+ mcp-server:8000 .*resolvers docker/);
});
