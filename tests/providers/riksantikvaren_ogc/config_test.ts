import assert from "node:assert/strict";
import { runCli } from "../../harness/spawn.ts";

Deno.test("riksantikvaren providers take GEO_API_TIMEOUT as their default timeout, 20 s otherwise (one request, well inside the 45 s call deadline)", async () => {
  const providers = "riksantikvaren_ogc,riksantikvaren_arcgis";
  const plain = await runCli(["config", "check", "--providers", providers]);
  assert.equal(plain.code, 0, plain.stderr);
  const checked = JSON.parse(plain.stdout);
  assert.equal(checked.server.call_timeout, 45, "every call answers by 45 s, before clients' own 60 s");
  const d = checked.providers;
  assert.equal(d.riksantikvaren_ogc.timeout, 20);
  assert.equal(d.riksantikvaren_ogc.base_url, "https://api.ra.no");
  assert.equal(d.riksantikvaren_arcgis.timeout, 20);
  assert.equal(d.riksantikvaren_arcgis.base_url, "https://kart.ra.no/arcgis/rest/services/Distribusjon");

  const env = await runCli(["config", "check", "--providers", providers], {
    env: { GEO_API_TIMEOUT: "7", DEFAULT_TIMEOUT: "3" },
    configYaml: "providers:\n  riksantikvaren_arcgis:\n    timeout: 90\n",
  });
  assert.equal(env.code, 0, env.stderr);
  const e = JSON.parse(env.stdout).providers;
  assert.equal(e.riksantikvaren_ogc.timeout, 7, "GEO_API_TIMEOUT wins over DEFAULT_TIMEOUT");
  assert.equal(e.riksantikvaren_arcgis.timeout, 90, "a timeout in the config file wins over the variable");
});
