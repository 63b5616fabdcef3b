import assert from "node:assert/strict";
import { parseConfig } from "../../../lib/config/parse.ts";
import { TEST_PROVIDERS as PROVIDERS } from "../../harness/providers.ts";

Deno.test("parseConfig() reads MCP_TRUST_PROXY into server.trust_proxy, default false", () => {
  const off = parseConfig({ flags: {}, env: {} }, PROVIDERS);
  assert.equal(off.server.trust_proxy, false);
  const on = parseConfig({ flags: {}, env: { MCP_TRUST_PROXY: "true" } }, PROVIDERS);
  assert.equal(on.server.trust_proxy, true);
  assert.throws(
    () => parseConfig({ flags: {}, env: { MCP_TRUST_PROXY: "maybe" } }, PROVIDERS),
    /MCP_TRUST_PROXY: expected true or false/,
  );
});

Deno.test("parseConfig() leaves the conformance provider off unless it is named", () => {
  const byDefault = parseConfig({ flags: {}, env: {} }, PROVIDERS);
  assert.ok(!byDefault.enabledProviders.includes("conformance"));
  const named = parseConfig({ flags: { providers: "conformance" }, env: {} }, PROVIDERS);
  assert.deepEqual(named.enabledProviders, ["conformance"]);
});
