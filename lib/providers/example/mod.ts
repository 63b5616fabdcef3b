import type { CommonSettings } from "../../config/provider_spec.ts";
import type { Provider, ProviderContext } from "../../mcp/provider.ts";
import { echoTool, pingTool } from "./tools.ts";

/** Creates the example provider: two tools, one resource and one prompt. */
export function createProvider(_context: ProviderContext<CommonSettings>): Provider {
  return {
    id: "example",
    tools: [pingTool, echoTool],
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
