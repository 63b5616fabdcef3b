import type { CommonSettings } from "../../config/provider_spec.ts";
import type {
  PromptDefinition,
  Provider,
  ProviderContext,
  ResourceDefinition,
  ResourceTemplateDefinition,
} from "../../mcp/provider.ts";
import { RED_PIXEL_PNG } from "./_media.ts";
import { conformanceTools } from "./tools.ts";

function textResource(uri: string, name: string, mimeType: string, text: string): ResourceDefinition {
  return {
    uri,
    name,
    description: `Conformance fixture ${uri}`,
    mimeType,
    read: () => Promise.resolve({ contents: [{ uri, mimeType, text }] }),
  };
}

const RESOURCES: readonly ResourceDefinition[] = [
  textResource(
    "test://static-text",
    "static-text",
    "text/plain",
    "This is the content of the static text resource.",
  ),
  {
    uri: "test://static-binary",
    name: "static-binary",
    description: "Conformance fixture test://static-binary (a 1x1 PNG)",
    mimeType: "image/png",
    read: () =>
      Promise.resolve({
        contents: [{ uri: "test://static-binary", mimeType: "image/png", blob: RED_PIXEL_PNG }],
      }),
  },
  {
    ...textResource("test://watched-resource", "watched-resource", "text/plain", "Watched resource content."),
    subscribable: true,
  },
];

const TEMPLATES: readonly ResourceTemplateDefinition[] = [{
  uriTemplate: "test://template/{id}/data",
  name: "template-data",
  description: "Conformance fixture: JSON naming the {id} it was read with",
  mimeType: "application/json",
  read(uri, variables) {
    const id = String(variables["id"]);
    return Promise.resolve({
      contents: [{
        uri: uri.href,
        mimeType: "application/json",
        text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
      }],
    });
  },
}];

const PROMPTS: readonly PromptDefinition[] = [
  {
    name: "test_simple_prompt",
    description: "A prompt without arguments",
    arguments: [],
    render: () => ({
      messages: [{ role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }],
    }),
  },
  {
    name: "test_prompt_with_arguments",
    description: "A prompt that quotes its two arguments",
    arguments: [
      {
        name: "arg1",
        description: "First test argument",
        required: true,
        complete: (value) => ["paris", "park", "party"].filter((v) => v.startsWith(value)),
      },
      { name: "arg2", description: "Second test argument", required: true },
    ],
    render: (args) => ({
      messages: [{
        role: "user",
        content: {
          type: "text",
          text: `Prompt with arguments: arg1='${args["arg1"]}', arg2='${args["arg2"]}'`,
        },
      }],
    }),
  },
  {
    name: "test_prompt_with_embedded_resource",
    description: "A prompt that embeds the resource named by resourceUri",
    arguments: [{ name: "resourceUri", description: "URI of the resource to embed", required: true }],
    render: (args) => ({
      messages: [
        {
          role: "user",
          content: {
            type: "resource",
            resource: {
              uri: args["resourceUri"]!,
              mimeType: "text/plain",
              text: "Embedded resource content for testing.",
            },
          },
        },
        { role: "user", content: { type: "text", text: "Please process the embedded resource above." } },
      ],
    }),
  },
  {
    name: "test_prompt_with_image",
    description: "A prompt carrying an image",
    arguments: [],
    render: () => ({
      messages: [
        { role: "user", content: { type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" } },
        { role: "user", content: { type: "text", text: "Please analyze the image above." } },
      ],
    }),
  },
];

/** Creates the conformance provider: fixture tools, resources, a template and prompts. */
export function createProvider(context: ProviderContext<CommonSettings>): Provider {
  return {
    id: "conformance",
    tools: conformanceTools(context.clock),
    resources: RESOURCES,
    resourceTemplates: TEMPLATES,
    prompts: PROMPTS,
  };
}
