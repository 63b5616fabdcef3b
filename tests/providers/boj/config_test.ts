// BOJ_* variables and --boj-* flags with their defaults, as docs/apis/boj.md "Configuration" lists them.
import assert from "node:assert/strict";
import { parseConfig } from "../../../lib/config/parse.ts";
import { PROVIDERS } from "../../../lib/providers/registry.ts";
import { bojSpec } from "../../../lib/providers/boj/config.ts";
import { envGranted, envNames, netAllowlist } from "../../../tools/permissions.ts";
import { runCli, startStdio } from "../../harness/spawn.ts";
import { FakeUpstream } from "../../fakes/upstream.ts";
import { ok } from "./_helpers.ts";

function boj(flags: Record<string, string> = {}, env: Record<string, string> = {}) {
  return parseConfig({ flags: { providers: "boj", ...flags }, env }, PROVIDERS).providers["boj"]!;
}

Deno.test("bojSpec defaults are the stat-search base URL, 10 s, 2 retries, 200 ms backoff", () => {
  const s = boj();
  assert.equal(s.base_url, "https://www.stat-search.boj.or.jp");
  assert.equal(s.timeout, 10);
  assert.equal(s.max_retries, 2);
  assert.equal(s.retry_backoff_ms, 200);
  assert.deepEqual(bojSpec.allowNet, ["www.stat-search.boj.or.jp"]);
});

Deno.test("bojSpec reads BOJ_BASE_URL, BOJ_TIMEOUT_MS, BOJ_RETRY_MAX and BOJ_RETRY_BACKOFF_MS", () => {
  const s = boj({}, {
    BOJ_BASE_URL: "http://127.0.0.1:9999",
    BOJ_TIMEOUT_MS: "2500",
    BOJ_RETRY_MAX: "4",
    BOJ_RETRY_BACKOFF_MS: "50",
  });
  assert.deepEqual([s.base_url, s.timeout, s.max_retries, s.retry_backoff_ms], [
    "http://127.0.0.1:9999",
    2.5,
    4,
    50,
  ]);
});

Deno.test("bojSpec flags --boj-* win over the BOJ_* variables", () => {
  const s = boj(
    {
      "boj-base-url": "http://127.0.0.1:8888",
      "boj-timeout-ms": "750",
      "boj-retry-max": "0",
      "boj-retry-backoff-ms": "10",
    },
    { BOJ_BASE_URL: "http://127.0.0.1:9999", BOJ_TIMEOUT_MS: "2500", BOJ_RETRY_MAX: "4" },
  );
  assert.deepEqual([s.base_url, s.timeout, s.max_retries, s.retry_backoff_ms], [
    "http://127.0.0.1:8888",
    0.75,
    0,
    10,
  ]);
});

Deno.test("the permission lists carry the BOJ host and variables", () => {
  assert.ok(netAllowlist().includes("www.stat-search.boj.or.jp"));
  for (const name of ["BOJ_BASE_URL", "BOJ_TIMEOUT_MS", "BOJ_RETRY_MAX", "BOJ_RETRY_BACKOFF_MS"]) {
    assert.ok(envNames().includes(name) && envGranted(name), name);
  }
});

Deno.test("the server reads BOJ_BASE_URL under its scoped permissions and --help lists the boj flags", async () => {
  await using fake = FakeUpstream.start([
    { path: "/api/v1/getMetadata", reply: { fixture: "boj/json_success_metadata_api.json" } },
  ]);
  await using s = await startStdio({
    args: ["--providers", "boj"],
    env: { BOJ_BASE_URL: fake.origin, BOJ_TIMEOUT_MS: "3000" },
  });
  const sc = ok(await s.client.callTool({ name: "boj_get_metadata", arguments: { db: "FM08" } }));
  assert.equal(sc.db, "FM08");
  assert.equal(fake.requests.length, 1);

  const help = await runCli(["--help"]);
  assert.equal(help.code, 0, help.stderr);
  for (const flag of ["--boj-base-url", "--boj-timeout-ms", "--boj-retry-max", "--boj-retry-backoff-ms"]) {
    assert.ok(help.stdout.includes(flag), flag);
  }
});
