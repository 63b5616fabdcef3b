import type { CommonSettings } from "../../config/provider_spec.ts";
import type { Provider, ProviderContext } from "../../mcp/provider.ts";
import { echoTool, pingTool } from "./tools.ts";

/** Creates the example provider: two tools, one resource and one prompt. */
export function createProvider(_context: ProviderContext<CommonSettings>): Provider {
  return {
    id: "example",
    tools: [pingTool, echoTool],
    toolsets: [{ id: "example", description: "Template tools: ping the server, echo arguments back" }],
    // The pattern of an opendata_search source: hits that name the exact next call.
    search: {
      name: "Example echo",
      licence: "public domain (the caller's own words)",
      // What to call when a query finds nothing (a query holding "nothing" finds nothing here).
      widen: (query) => [{ tool: "example-echo", arguments: { query }, for: "echo it back" }],
      search: (query, options) =>
        Promise.resolve(
          Array.from({ length: query.includes("nothing") ? 0 : Math.min(options.limit, 2) }, (_, i) => ({
            title: `Echo ${i + 1} of "${query}"`,
            snippet: "Calling example-echo with these arguments sends them back.",
            next: { tool: "example-echo", arguments: { query, hit: i + 1 } },
          })),
        ),
    },
    resources: [{
      uri: "example://about",
      name: "example-about",
      title: "About the example provider",
      description: "What the example provider is for",
      mimeType: "text/markdown",
      read: (uri) =>
        Promise.resolve({
          contents: [{
            uri: uri.href,
            mimeType: "text/markdown",
            text: "# Example provider\n\nThe template a new provider copies: see docs/apis/example.md.",
          }],
        }),
    }],
    prompts: [{
      name: "example_ping_flow",
      title: "Check the server",
      description: "Asks the model to ping the server and report what came back",
      arguments: [{
        name: "note",
        description: "Optional words to echo back after the ping",
        complete: (value) => ["hello", "hei", "hallo"].filter((v) => v.startsWith(value)),
      }],
      render: (args) => ({
        messages: [{
          role: "user",
          content: {
            type: "text",
            text: `Call example-ping, then call example-echo with {"note": ${
              JSON.stringify(args["note"] ?? "hello")
            }} and report both results.`,
          },
        }],
      }),
    }],
  };
}
