import { defineProvider } from "../../../lib/config/provider_spec.ts";

/**
 * The conformance provider's spec: the fixture tools, resources and prompts the official MCP
 * conformance suite calls by fixed names. Test-only: never served unless named explicitly
 * (`--providers conformance`), and it reaches no upstream.
 */
export const conformanceSpec = defineProvider({
  id: "conformance",
  title: "Conformance fixtures",
  description:
    "Fixtures for the official MCP conformance suite (tests only; served only when named in --providers)",
  defaultEnabled: false,
  hidden: true,
  common: { base_url: "https://example.org", cache_ttl: 0 },
  hosts: () => [],
  allowNet: [],
  load: () => import("./mod.ts"),
});
