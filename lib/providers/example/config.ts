import { defineProvider } from "../../config/provider_spec.ts";

/**
 * The example provider's spec: the template a new provider copies. It calls no upstream, so it
 * needs no host in the network allowlist.
 */
export const exampleSpec = defineProvider({
  id: "example",
  title: "Example",
  description: "Template provider: example-ping and example-echo (enabled only on request)",
  defaultEnabled: false,
  common: { base_url: "https://example.org", cache_ttl: 0 },
  hosts: () => [],
  allowNet: [],
  load: () => import("./mod.ts"),
});
