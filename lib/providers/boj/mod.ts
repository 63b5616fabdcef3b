import type { Provider, ProviderContext } from "../../mcp/provider.ts";
import { BojClient } from "./client.ts";
import type { BojSettings } from "./settings.ts";
import { PROMPTS, RESOURCE_TEMPLATES, RESOURCES } from "./discovery.ts";
import { createSearchSource } from "./search.ts";
import { createTools, DATA_TOOLSET, DISCOVERY_TOOLSET } from "./tools.ts";

/** Creates the BOJ provider: six tools, three prompts, three resources and two templates. */
export function createProvider(context: ProviderContext<BojSettings>): Provider {
  const client = new BojClient(context);
  return {
    id: "boj",
    tools: createTools({ client, settings: context.settings, clock: context.clock }),
    toolsets: [
      {
        id: DATA_TOOLSET,
        description:
          "Bank of Japan time series: observations by code or hierarchy layer, and series metadata",
      },
      {
        id: DISCOVERY_TOOLSET,
        description:
          "Bank of Japan API catalogs: the 50 databases, parameters and message codes (no upstream call)",
      },
    ],
    search: createSearchSource(context.clock, client),
    resources: RESOURCES,
    resourceTemplates: RESOURCE_TEMPLATES,
    prompts: PROMPTS,
  };
}
