// The resources, resource templates, prompts and subscriptions of one server instance
// (createServer in server.ts), registered from the providers' definitions.
import { z } from "zod";
import { completable, ProtocolError, ProtocolErrorCode, ResourceTemplate, UriTemplate } from "./sdk.ts";
import type {
  McpExtra,
  PromptDefinition,
  Provider,
  ResourceDefinition,
  ResourceTemplateDefinition,
} from "./provider.ts";
import type { McpServer } from "./sdk.ts";
import type { SecretMasker } from "../secrets.ts";

/** Options for {@linkcode registerPrimitives}. */
export interface PrimitiveOptions {
  /** Who calls over HTTP (see `ToolCallContext.owner`); absent over stdio. */
  owner?: string | undefined;
  /** Masks configured secrets in every resource read (whatever a provider's resource holds). */
  secrets?: SecretMasker | undefined;
}

/** A resource read's result with its secrets masked. */
type Masked = <T>(read: Promise<T>) => Promise<T>;

/** Registers each provider's resources, resource templates and prompts, provider by provider. */
export function registerPrimitives(
  server: McpServer,
  providers: readonly Provider[],
  options: PrimitiveOptions,
): void {
  // Resource and prompt handlers learn who calls the way tools do (jobs and files are theirs).
  const withOwner = (ctx: McpExtra): McpExtra =>
    options.owner === undefined ? ctx : { ...ctx, owner: options.owner };
  const secrets = options.secrets;
  const masked: Masked = secrets && !secrets.empty
    ? async (read) => {
      try {
        return secrets.maskDeep(await read);
      } catch (e) {
        // A failed read's message goes to the client as a JSON-RPC error: an upstream may echo a key into it.
        if (e instanceof Error) e.message = secrets.mask(e.message);
        throw e;
      }
    }
    : (read) => read;
  for (const provider of providers) {
    for (const resource of provider.resources ?? []) registerResource(server, resource, withOwner, masked);
    for (const template of provider.resourceTemplates ?? []) {
      registerTemplate(server, template, withOwner, masked);
    }
    for (const prompt of provider.prompts ?? []) registerPrompt(server, prompt, withOwner);
  }
}

function registerResource(
  server: McpServer,
  resource: ResourceDefinition,
  withOwner: (ctx: McpExtra) => McpExtra,
  masked: Masked,
): void {
  server.registerResource(
    resource.name,
    resource.uri,
    {
      ...(resource.title ? { title: resource.title } : {}),
      description: resource.description,
      mimeType: resource.mimeType,
    },
    (uri, ctx) => masked(resource.read(uri, withOwner(ctx))),
  );
}

function registerTemplate(
  server: McpServer,
  template: ResourceTemplateDefinition,
  withOwner: (ctx: McpExtra) => McpExtra,
  masked: Masked,
): void {
  const list = template.list;
  server.registerResource(
    template.name,
    new ResourceTemplate(uriTemplateOf(template.uriTemplate), {
      list: list
        ? async (ctx) => ({
          resources: (await list(withOwner(ctx))).map((r) => ({ mimeType: template.mimeType, ...r })),
        })
        : undefined,
      ...(template.complete ? { complete: template.complete } : {}),
    }),
    {
      ...(template.title ? { title: template.title } : {}),
      description: template.description,
      mimeType: template.mimeType,
    },
    (uri, variables, ctx) => masked(template.read(uri, variables, withOwner(ctx))),
  );
}

/**
 * The parsed URI template of `source`, parsed once: every server instance registers the same
 * templates, and a parsed template is only ever matched and expanded, never changed.
 */
function uriTemplateOf(source: string): UriTemplate {
  let parsed = uriTemplates.get(source);
  if (!parsed) {
    // Bounded: templates come from the providers, a fixed few, but nothing here enforces that.
    if (uriTemplates.size >= 1024) uriTemplates.clear();
    parsed = new UriTemplate(source);
    // The SDK reads the variable names at every registration; its getter rebuilds the list.
    Object.defineProperty(parsed, "variableNames", { value: Object.freeze(parsed.variableNames) });
    uriTemplates.set(source, parsed);
  }
  return parsed;
}

const uriTemplates = new Map<string, UriTemplate>();

/**
 * A prompt's arguments as a schema of strings (completable where the prompt completes them),
 * made once per prompt: every server instance (each session, each 2026-07-28 request) registers
 * the same prompts, and building schemas was most of what registering cost.
 */
function argsSchemaOf(prompt: PromptDefinition): z.ZodObject<Record<string, z.ZodType<string | undefined>>> {
  const known = argsSchemas.get(prompt);
  if (known) return known;
  const shape: Record<string, z.ZodType<string | undefined>> = {};
  for (const arg of prompt.arguments) {
    const complete = arg.complete;
    const field = z.string().describe(arg.description);
    const marked = complete
      ? completable(field, (value: unknown) => complete(typeof value === "string" ? value : ""))
      : field;
    shape[arg.name] = arg.required ? marked : marked.optional();
  }
  const schema = z.object(shape);
  argsSchemas.set(prompt, schema);
  return schema;
}

const argsSchemas = new WeakMap<
  PromptDefinition,
  z.ZodObject<Record<string, z.ZodType<string | undefined>>>
>();

/** Registers a prompt with its arguments as strings (completable where the prompt completes them). */
function registerPrompt(
  server: McpServer,
  prompt: PromptDefinition,
  withOwner: (ctx: McpExtra) => McpExtra,
): void {
  server.registerPrompt(
    prompt.name,
    {
      ...(prompt.title ? { title: prompt.title } : {}),
      description: prompt.description,
      argsSchema: argsSchemaOf(prompt),
    },
    (args: Record<string, string | undefined>, ctx: McpExtra) => {
      const clean: Record<string, string> = {};
      for (const [k, v] of Object.entries(args)) if (v !== undefined) clean[k] = v;
      return prompt.render(clean, withOwner(ctx));
    },
  );
}

/**
 * Answers `resources/subscribe` and `resources/unsubscribe` (2025 era) for resources marked
 * `subscribable`, remembering this session's subscriptions. Without such resources the
 * capability stays off.
 */
export function registerSubscriptions(server: McpServer, providers: readonly Provider[]): void {
  const subscribable = new Set(
    providers.flatMap((p) => (p.resources ?? []).filter((r) => r.subscribable).map((r) => r.uri)),
  );
  if (subscribable.size === 0) return;
  const subscribed = new Set<string>();
  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler("resources/subscribe", (request) => {
    const { uri } = request.params;
    if (!subscribable.has(uri)) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Resource "${uri}" does not take subscriptions; subscribable resources: ${
          [...subscribable].map((u) => `"${u}"`).join(", ")
        }`,
      );
    }
    subscribed.add(uri);
    return {};
  });
  server.server.setRequestHandler("resources/unsubscribe", (request) => {
    subscribed.delete(request.params.uri);
    return {};
  });
}
