// The quota block of `server` (lib/config/quota.ts): defaults, the bounded preset, explicit keys
// over it, and the old names read as deprecated aliases with one warning each.
import assert from "node:assert/strict";
import { quotaLedger } from "../../lib/app.ts";
import { knownEnvNames, parseConfig } from "../../lib/config/parse.ts";
import type { ConfigInput } from "../../lib/config/parse.ts";
import type { ProviderSpec } from "../../lib/config/provider_spec.ts";
import { QUOTA_BOUNDED, QUOTA_ON } from "../../lib/config/quota.ts";
import { loadYaml } from "../../lib/config/yaml.ts";
import { ConfigError } from "../../lib/errors.ts";
import { exampleSpec } from "../../lib/providers/example/config.ts";
import { fredSpec } from "../../lib/providers/fred/config.ts";

await loadYaml();

const SPECS = [fredSpec, exampleSpec] as unknown as ProviderSpec[];

function parse(input: Partial<ConfigInput>): ReturnType<typeof parseConfig> {
  return parseConfig({ flags: {}, env: { OPENDATA_MCP_PROVIDERS: "fred", ...input.env }, ...input }, SPECS);
}

function quota(config: ReturnType<typeof parseConfig>): Record<string, number> {
  const s = config.server;
  return {
    quota_projects: s.quota_projects,
    quota_mb: s.quota_mb,
    quota_jobs: s.quota_jobs,
    quota_job_records: s.quota_job_records,
  };
}

Deno.test("parseConfig() gives writes on the per-client quota the old FRED and export settings had", () => {
  const config = parse({});
  assert.equal(config.server.writes, "on");
  assert.deepEqual(quota(config), {
    quota_projects: 10,
    quota_mb: 100,
    quota_jobs: 4,
    quota_job_records: 100,
  });
  assert.deepEqual(quota(config), QUOTA_ON);
  assert.deepEqual(config.warnings, []);
});

Deno.test("parseConfig() takes the bounded preset for writes: bounded, and any quota key set wins over it", () => {
  assert.deepEqual(quota(parse({ env: { MCP_WRITES: "bounded" } })), {
    quota_projects: 3,
    quota_mb: 16,
    quota_jobs: 2,
    quota_job_records: 20,
  });
  assert.deepEqual(quota(parse({ flags: { writes: "bounded" } })), QUOTA_BOUNDED);
  const mixed = parse({
    env: { MCP_WRITES: "bounded", MCP_QUOTA_MB: "64" },
    fileText: "server:\n  quota_jobs: 5\n",
  });
  assert.equal(mixed.server.writes, "bounded");
  assert.deepEqual(quota(mixed), { quota_projects: 3, quota_mb: 64, quota_jobs: 5, quota_job_records: 20 });
  // A key set to its `on` default still counts as set.
  assert.equal(parse({ env: { MCP_WRITES: "bounded", MCP_QUOTA_PROJECTS: "10" } }).server.quota_projects, 10);
  assert.throws(() => parse({ env: { MCP_QUOTA_JOBS: "0" } }), /server\.quota_jobs/);
});

Deno.test("parseConfig() reads the old per-client names as the quota keys, warning once for each", () => {
  const config = parse({
    env: {
      FRED_MAX_PROJECTS_PER_CLIENT: "7",
      FRED_MAX_JOBS_PER_CLIENT: "2",
      FRED_MAX_JOB_RECORDS_PER_CLIENT: "50",
      OPENDATA_MCP_EXPORT_MAX_MB_PER_CLIENT: "40",
    },
    fileText: "providers:\n  fred:\n    max_storage_mb_per_client: 60\n",
  });
  // A write had to fit both byte limits: the smaller one is the quota.
  assert.deepEqual(quota(config), { quota_projects: 7, quota_mb: 40, quota_jobs: 2, quota_job_records: 50 });
  assert.equal(config.warnings.length, 5);
  assert.deepEqual(
    config.warnings.find((w) => w.startsWith("FRED_MAX_PROJECTS_PER_CLIENT")),
    'FRED_MAX_PROJECTS_PER_CLIENT is deprecated: it now sets "quota_projects" (MCP_QUOTA_PROJECTS), the one per-client quota of every provider and result file; rename it',
  );
  assert.ok(
    config.warnings.some((w) =>
      /^providers\.fred\.max_storage_mb_per_client in the config file is deprecated: it now sets "quota_mb"/
        .test(w)
    ),
  );
  assert.ok(
    !("max_projects_per_client" in config.providers["fred"]!),
    "the provider block no longer has the key",
  );
});

Deno.test("parseConfig() lets a quota key set win over an old name, and says the old one is ignored", () => {
  const config = parse({ env: { MCP_QUOTA_PROJECTS: "20", FRED_MAX_PROJECTS_PER_CLIENT: "2" } });
  assert.equal(config.server.quota_projects, 20);
  assert.deepEqual(config.warnings, [
    'FRED_MAX_PROJECTS_PER_CLIENT is deprecated and ignored: "quota_projects" (MCP_QUOTA_PROJECTS) is set; remove it',
  ]);
});

Deno.test("parseConfig() reads writes_max_* as the quota with writes: bounded, and as nothing otherwise", () => {
  const yaml = "server:\n  writes: bounded\n  writes_max_projects: 5\n  writes_max_mb: 8\n";
  const bounded = parse({ fileText: yaml });
  assert.deepEqual(quota(bounded), { quota_projects: 5, quota_mb: 8, quota_jobs: 2, quota_job_records: 20 });
  assert.equal(bounded.warnings.length, 2);
  // Under bounded the old per-client caps applied too: the smaller one was met first.
  assert.equal(
    parse({ fileText: yaml, env: { FRED_MAX_PROJECTS_PER_CLIENT: "4" } }).server.quota_projects,
    4,
  );
  assert.equal(
    parse({ env: { MCP_WRITES: "bounded", FRED_MAX_PROJECTS_PER_CLIENT: "9" } }).server.quota_projects,
    3,
  );
  const on = parse({ fileText: "server:\n  writes_max_jobs: 1\n" });
  assert.equal(on.server.quota_jobs, 4);
  assert.match(
    on.warnings[0]!,
    /^server\.writes_max_jobs in the config file is deprecated and has no effect/,
  );
});

Deno.test("parseConfig() ignores the old FRED names while FRED is not enabled, and refuses a bad old value", () => {
  const off = parseConfig({
    flags: {},
    env: { OPENDATA_MCP_PROVIDERS: "example", FRED_MAX_PROJECTS_PER_CLIENT: "2" },
    fileText: "providers:\n  fred:\n    max_jobs_per_client: 1\n",
  }, SPECS);
  assert.deepEqual(quota(off), QUOTA_ON);
  assert.deepEqual(off.warnings, []);
  assert.throws(
    () => parse({ fileText: "server:\n  export_max_mb_per_client: -1\n" }),
    (e: unknown) => e instanceof ConfigError && /expected a positive number, got -1/.test(e.message),
  );
  assert.throws(() => parse({ env: { FRED_MAX_JOBS_PER_CLIENT: "many" } }), /FRED_MAX_JOBS_PER_CLIENT/);
});

Deno.test("knownEnvNames() keeps the old quota variables readable", () => {
  const names = knownEnvNames(SPECS);
  for (
    const n of ["MCP_QUOTA_MB", "OPENDATA_MCP_EXPORT_MAX_MB_PER_CLIENT", "FRED_MAX_STORAGE_MB_PER_CLIENT"]
  ) {
    assert.ok(names.includes(n), n);
  }
});

Deno.test("quotaLedger() gives the server's ledger the parsed quota: bounded's preset in bytes, writes off refusing", () => {
  const bounded = quotaLedger(parse({ env: { MCP_WRITES: "bounded", MCP_QUOTA_JOBS: "3" } }).server);
  assert.equal(bounded.writes, "on");
  assert.deepEqual({ ...bounded.limits }, { projects: 3, bytes: 16 * 1_048_576, jobs: 3, jobRecords: 20 });
  const off = quotaLedger(parse({ env: { MCP_WRITES: "off" } }).server);
  assert.equal(off.writes, "off");
  assert.throws(() => off.checkJobs(undefined), /read-only \(MCP_WRITES=off\)/);
});
