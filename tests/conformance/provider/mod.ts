import { ToolError } from "../../../lib/errors.ts";
import type { CommonSettings } from "../../../lib/config/provider_spec.ts";
import type {
  PromptDefinition,
  Provider,
  ProviderContext,
  ResourceDefinition,
  ResourceTemplateDefinition,
} from "../../../lib/mcp/provider.ts";
import { inputRequired } from "../../../lib/mcp/sdk.ts";
import { acceptedText, oneField } from "./_fixture.ts";
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
  {
    // Last: the caching scenario reads the first listed resource and expects a plain answer.
    uri: "test://input-required-resource",
    name: "input-required-resource",
    description:
      "Conformance fixture test://input-required-resource: asks the reader's name (elicitation) first",
    mimeType: "text/plain",
    read(uri, extra) {
      const name = acceptedText(extra.mcpReq.inputResponses, "reader_name", "name");
      if (name === undefined) {
        return Promise.resolve(inputRequired({
          inputRequests: {
            reader_name: inputRequired.elicit({
              message: "Who is reading?",
              requestedSchema: oneField("name", "string"),
            }),
          },
        }));
      }
      return Promise.resolve({
        contents: [{ uri: uri.href, mimeType: "text/plain", text: `Read by ${name}` }],
      });
    },
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
  {
    name: "test_input_required_result_prompt",
    description: "A prompt that asks for its context (elicitation, key user_context) before it renders",
    arguments: [],
    render: (_args, extra) => {
      const context = acceptedText(extra.mcpReq.inputResponses, "user_context", "context");
      if (context === undefined) {
        return inputRequired({
          inputRequests: {
            user_context: inputRequired.elicit({
              message: "What context should the prompt use?",
              requestedSchema: oneField("context", "string"),
            }),
          },
        });
      }
      return {
        messages: [{
          role: "user",
          content: { type: "text", text: `Use the following context: ${context}` },
        }],
      };
    },
  },
];

/** Creates the conformance provider: fixture tools, resources, a template and prompts. */
export function createProvider(context: ProviderContext<CommonSettings>): Provider {
  return {
    id: "conformance",
    tools: conformanceTools(context.clock),
    // A search source for the core's tests: "fail" fails, "slow" never answers in time.
    search: {
      name: "Conformance fixtures",
      licence: "test data",
      async search(query, _options, ctx) {
        if (query.includes("fail")) throw new ToolError("API_ERROR", "The fixture source failed on purpose");
        if (query.includes("slow")) await context.clock.sleep(600_000, ctx.signal);
        return [{ title: "Simple text", next: { tool: "test_simple_text", arguments: {} } }];
      },
    },
    resources: RESOURCES,
    resourceTemplates: TEMPLATES,
    prompts: PROMPTS,
  };
}
