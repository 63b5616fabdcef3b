// A provider served from its listing: tools/list, the toolsets, opendata_describe and the
// prompt and resource lists come from the generated file; the provider's code is loaded and
// the provider created on the first thing that needs it (a tool call, a search of its source, a
// resource read or listing, a prompt, a completion), once, for every server instance.
import { ToolError } from "../errors.ts";
import type { ProviderListing } from "./listing.ts";
import type {
  PromptDefinition,
  Provider,
  ResourceDefinition,
  ResourceTemplateDefinition,
  SearchSource,
  ToolDefinition,
} from "./provider.ts";
import { ProtocolError, ProtocolErrorCode } from "./sdk.ts";
import type { Tool } from "./sdk.ts";
import type { ViewId } from "./views/model.ts";

interface Stub {
  listed: Tool;
  // deno-lint-ignore no-explicit-any
  resolve(): Promise<ToolDefinition<any, any>>;
}

const stubs = new WeakMap<object, Stub>();

/** The tools/list entry of a tool that stands in for a provider not loaded yet; else undefined. */
export function listedTool(tool: object): Tool | undefined {
  return stubs.get(tool)?.listed;
}

/**
 * The definition to run: `tool` itself, or for a listed tool its provider's own definition,
 * loading the provider first if needed. Rejects with a {@linkcode ToolError} naming the provider
 * when it cannot be loaded.
 */
// deno-lint-ignore no-explicit-any
export function loadedTool(tool: ToolDefinition<any, any>): Promise<ToolDefinition<any, any>> {
  const stub = stubs.get(tool);
  return stub ? stub.resolve() : Promise.resolve(tool);
}

/** Why a provider's code could not be loaded, in words that name no path of the server's files. */
function loadFailure(e: unknown): string {
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  if (/Module not found|Cannot find module|ERR_MODULE_NOT_FOUND|NotFound/i.test(text)) {
    return "a module of its code is missing from this installation";
  }
  return `its code failed while loading (${e instanceof Error ? e.name : "error"})`;
}

/**
 * A provider served from `listing`; `load` loads and creates the real one. Concurrent first
 * uses share one load; a failed load is reported, as not retryable, to every caller from then on.
 */
export function lazyProvider(id: string, listing: ProviderListing, load: () => Promise<Provider>): Provider {
  let pending: Promise<Provider> | undefined;
  const provider = (): Promise<Provider> => {
    // A failed load is kept: module loading is not transient (a missing module stays missing, a
    // module that threw stays broken in this process), so asking again would only fail again.
    pending ??= load().catch((e) => {
      throw new ToolError(
        "INTERNAL_ERROR",
        // The cause (a module path, a stack) is logged, not shown to the client.
        `The provider "${id}" could not be loaded: ${loadFailure(e)}`,
        {
          retryable: false,
          cause: e,
          hint: "This installation of the server is broken for this provider; the other tools still work. " +
            "Reinstall the server, or report it with the server's log, which names the failing module",
        },
      );
    });
    return pending;
  };
  /** For protocol requests (resources, prompts, completions): a load failure is a JSON-RPC error. */
  const forProtocol = async (): Promise<Provider> => {
    try {
      return await provider();
    } catch (e) {
      throw new ProtocolError(ProtocolErrorCode.InternalError, e instanceof Error ? e.message : String(e));
    }
  };
  const missing = (what: string): Error =>
    new Error(
      `The provider "${id}" does not define the ${what} its listing names: regenerate it with deno task schemas`,
    );

  const tools = listing.tools.map(({ toolset, tool, view }) =>
    stubTool(tool, toolset, view, async () => {
      const real = (await provider()).tools.find((t) => t.name === tool.name);
      if (!real) {
        throw new ToolError("INTERNAL_ERROR", missing(`tool "${tool.name}"`).message, { retryable: false });
      }
      return real;
    })
  );

  const out: Provider = { id, tools, toolsets: listing.toolsets };
  if (listing.search) {
    // The source once loaded: its widening calls are asked for after a search, which loads it.
    let loaded: SearchSource | undefined;
    const search: SearchSource = {
      name: listing.search.name,
      licence: listing.search.licence,
      ...(listing.search.languages ? { languages: listing.search.languages } : {}),
      async search(query, options, context) {
        const source = (await provider()).search;
        if (!source) throw new ToolError("INTERNAL_ERROR", missing("search source").message);
        loaded = source;
        return await source.search(query, options, context);
      },
      widen: (query) => loaded?.widen?.(query) ?? [],
    };
    out.search = search;
  }
  if (listing.unavailable) out.unavailable = listing.unavailable;
  // Only a call of a loaded provider can have started one of its jobs, so these load nothing.
  const jobs = async (): Promise<NonNullable<Provider["jobs"]>> => {
    const real = (await provider()).jobs;
    if (!real) throw new ToolError("INTERNAL_ERROR", missing("jobs").message, { retryable: false });
    return real;
  };
  out.jobs = {
    wait: async (jobId, options) => await (await jobs()).wait(jobId, options),
    cancel: async (jobId, owner) => await (await jobs()).cancel(jobId, owner),
  };
  if (listing.resources) {
    out.resources = listing.resources.map((r): ResourceDefinition => ({
      ...r,
      async read(uri, extra) {
        const real = (await forProtocol()).resources?.find((x) => x.uri === r.uri);
        if (!real) throw missing(`resource "${r.uri}"`);
        return await real.read(uri, extra);
      },
    }));
  }
  if (listing.resourceTemplates) {
    out.resourceTemplates = listing.resourceTemplates.map(
      ({ list, complete, ...t }): ResourceTemplateDefinition => {
        const real = async (): Promise<ResourceTemplateDefinition> => {
          const found = (await forProtocol()).resourceTemplates?.find((x) => x.name === t.name);
          if (!found) throw missing(`resource template "${t.name}"`);
          return found;
        };
        return {
          ...t,
          ...(list ? { list: async (extra) => (await real()).list?.(extra) ?? [] } : {}),
          ...(complete.length
            ? {
              complete: Object.fromEntries(complete.map((name) => [
                name,
                async (value: string) => (await (await real()).complete?.[name]?.(value)) ?? [],
              ])),
            }
            : {}),
          read: async (uri, variables, extra) => (await real()).read(uri, variables, extra),
          fileSource: async (variables, extra) => (await (await real()).fileSource?.(variables, extra)) ?? {},
        };
      },
    );
  }
  if (listing.prompts) {
    out.prompts = listing.prompts.map((p): PromptDefinition => {
      const real = async (): Promise<PromptDefinition> => {
        const found = (await forProtocol()).prompts?.find((x) => x.name === p.name);
        if (!found) throw missing(`prompt "${p.name}"`);
        return found;
      };
      return {
        name: p.name,
        ...(p.title === undefined ? {} : { title: p.title }),
        description: p.description,
        arguments: p.arguments.map(({ complete, ...a }) => ({
          ...a,
          ...(complete
            ? {
              complete: async (value: string) =>
                (await (await real()).arguments.find((x) => x.name === a.name)?.complete?.(value)) ?? [],
            }
            : {}),
        })),
        render: async (args, extra) => (await real()).render(args, extra),
      };
    });
  }
  out.close = async () => {
    const loading = pending;
    if (!loading) return;
    const loaded = await loading.catch(() => undefined);
    await loaded?.close?.();
  };
  return out;
}

/** A tool definition that lists like the real one and runs it through {@linkcode loadedTool}. */
function stubTool(
  listed: Tool,
  toolset: string,
  view: ViewId | undefined,
  // deno-lint-ignore no-explicit-any
  resolve: () => Promise<ToolDefinition<any, any>>,
  // deno-lint-ignore no-explicit-any
): ToolDefinition<any, any> {
  const { title: _title, ...annotations } = listed.annotations ?? {};
  const notLoaded = (): Error =>
    new Error(`The tool "${listed.name}" is listed, not loaded: run it through loadedTool()`);
  // deno-lint-ignore no-explicit-any
  const stub: ToolDefinition<any, any> = {
    name: listed.name,
    title: listed.title ?? listed.name,
    description: listed.description ?? "",
    toolset,
    ...(view ? { view: { id: view } } : {}),
    get input(): never {
      throw notLoaded();
    },
    output: undefined,
    annotations,
    ...(listed.execution ? { execution: listed.execution as NonNullable<ToolDefinition["execution"]> } : {}),
    handler: () => Promise.reject(notLoaded()),
  };
  // deno-lint-ignore no-explicit-any
  let real: Promise<ToolDefinition<any, any>> | undefined;
  stubs.set(stub, {
    listed,
    resolve: () => {
      real ??= resolve().catch((e) => {
        real = undefined;
        throw e;
      });
      return real;
    },
  });
  return stub;
}
