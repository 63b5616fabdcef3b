import type { CommonSettings } from "../../config/provider_spec.ts";
import type { Provider, ProviderContext } from "../../mcp/provider.ts";
import { BojClient } from "./client.ts";
import { PROMPTS, RESOURCE_TEMPLATES, RESOURCES } from "./discovery.ts";
import { createTools } from "./tools.ts";

/** Creates the BOJ provider: six tools, three prompts, three resources and two templates. */
export function createProvider(context: ProviderContext<CommonSettings>): Provider {
  const client = new BojClient(context);
  return {
    id: "boj",
    tools: createTools(client),
    resources: RESOURCES,
    resourceTemplates: RESOURCE_TEMPLATES,
    prompts: PROMPTS,
  };
}
