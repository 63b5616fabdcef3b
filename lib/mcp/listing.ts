// What a provider serves, as data: its tools as tools/list describes them (JSON Schemas
// included), its toolsets, search source, resources and prompts. `deno task schemas` writes the
// listings of every provider to a generated file, so a server lists tools without loading
// provider code or converting schemas; the provider itself is loaded on its first call.
import type { Tool } from "./sdk.ts";
import type { ViewId } from "./views/model.ts";
import type { Provider, ResourceDefinition, ToolsetInfo, UnavailableTools } from "./provider.ts";

/** One tool as served: the tools/list entry and its toolset. */
export interface ToolListing {
  toolset: string;
  tool: Tool;
  /** The view that shows its results (MCP Apps), when it has one. */
  view?: ViewId;
}

/** A fixed resource, without its reader. */
export type ResourceListing = Omit<ResourceDefinition, "read">;

/** A resource template, without its handlers: whether it enumerates, which variables complete. */
export interface TemplateListing {
  uriTemplate: string;
  name: string;
  title?: string;
  description: string;
  mimeType: string;
  list: boolean;
  complete: string[];
}

/** A prompt, without its renderer: its arguments and which of them complete. */
export interface PromptListing {
  name: string;
  title?: string;
  description: string;
  arguments: { name: string; description: string; required?: boolean; complete: boolean }[];
}

/** Everything a provider serves, as created with one configuration. */
export interface ProviderListing {
  toolsets: ToolsetInfo[];
  tools: ToolListing[];
  search?: { name: string; licence: string; languages?: string[] };
  unavailable?: UnavailableTools[];
  resources?: ResourceListing[];
  resourceTemplates?: TemplateListing[];
  prompts?: PromptListing[];
  /** The warnings its creation logs (the start-up log repeats them without creating it). */
  warnings: string[];
}

/** One listing and the settings it holds for. */
export interface ListingVariant {
  /** Per switch setting: set (non-empty) or not. */
  when: Record<string, boolean>;
  listing: ProviderListing;
}

/** A provider's entry in the generated file. */
export interface ProviderListings {
  /** Its `mod.ts`, relative to the registry (resolved to a URL by {@linkcode withListings}). */
  module: string;
  /**
   * Settings (and `$character_limit`, `$data_dir` of the provider context) whose value changes
   * what it serves, with the value the listings were made with: with another value the provider
   * is created at start-up instead.
   */
  fixed: Record<string, unknown>;
  /** Settings whose presence alone (empty or not) changes what it serves, e.g. an API key. */
  switches: string[];
  /**
   * The provider's settings when its configuration sets nothing: its block's schema applied to
   * `{}`. A start that sets nothing for the provider takes them from here without building the
   * schema.
   */
  defaults: Record<string, unknown>;
  variants: ListingVariant[];
}

/** The generated file: every provider's listings, by provider id. */
export interface ListingFile {
  providers: Record<string, ProviderListings>;
}

/** What a provider's creation sees besides its settings, in the keys `fixed` uses. */
export interface ListingContext {
  $character_limit: number;
  $data_dir: string;
}

/**
 * The listing a provider's entry holds for these settings, or undefined when a setting it
 * depends on has another value than the listings were made with.
 */
export function selectListing(
  entry: ProviderListings,
  settings: Record<string, unknown>,
  context: ListingContext,
): ProviderListing | undefined {
  const actual = (key: string): unknown =>
    key in context ? context[key as keyof ListingContext] : settings[key];
  for (const [key, value] of Object.entries(entry.fixed)) {
    if (JSON.stringify(actual(key)) !== JSON.stringify(value)) return undefined;
  }
  const variant = entry.variants.find((v) =>
    entry.switches.every((key) => v.when[key] === isSet(actual(key)))
  );
  return variant?.listing;
}

/** Whether a switch setting counts as set. */
export function isSet(value: unknown): boolean {
  return value !== undefined && value !== null && value !== "" &&
    !(Array.isArray(value) && value.length === 0);
}

/**
 * The listing of a created provider, with the warnings its creation logged. `describe` gives
 * a tool's tools/list entry (the server's `describeTool`).
 */
export function listProvider(
  provider: Provider,
  warnings: readonly string[],
  // deno-lint-ignore no-explicit-any
  describe: (tool: any) => Tool,
): ProviderListing {
  const listing: ProviderListing = {
    toolsets: [...(provider.toolsets ?? [])].map((t) => ({ id: t.id, description: t.description })),
    tools: provider.tools.map((t) => ({
      toolset: t.toolset ?? provider.id,
      tool: describe(t),
      ...(t.view ? { view: t.view.id } : {}),
    })),
    warnings: [...warnings],
  };
  if (provider.search) {
    listing.search = {
      name: provider.search.name,
      licence: provider.search.licence,
      ...(provider.search.languages ? { languages: [...provider.search.languages] } : {}),
    };
  }
  if (provider.unavailable?.length) {
    listing.unavailable = provider.unavailable.map((u) => ({
      toolset: u.toolset,
      tools: [...u.tools],
      reason: u.reason,
    }));
  }
  if (provider.resources?.length) {
    listing.resources = provider.resources.map((r) => ({
      uri: r.uri,
      name: r.name,
      ...(r.title === undefined ? {} : { title: r.title }),
      description: r.description,
      mimeType: r.mimeType,
      ...(r.subscribable ? { subscribable: true } : {}),
    }));
  }
  if (provider.resourceTemplates?.length) {
    listing.resourceTemplates = provider.resourceTemplates.map((t) => ({
      uriTemplate: t.uriTemplate,
      name: t.name,
      ...(t.title === undefined ? {} : { title: t.title }),
      description: t.description,
      mimeType: t.mimeType,
      list: t.list !== undefined,
      complete: Object.keys(t.complete ?? {}),
    }));
  }
  if (provider.prompts?.length) {
    listing.prompts = provider.prompts.map((p) => ({
      name: p.name,
      ...(p.title === undefined ? {} : { title: p.title }),
      description: p.description,
      arguments: p.arguments.map((a) => ({
        name: a.name,
        description: a.description,
        ...(a.required === undefined ? {} : { required: a.required }),
        complete: a.complete !== undefined,
      })),
    }));
  }
  return listing;
}

/**
 * Attaches each provider's listings from the generated file to its spec, with the module path
 * resolved against `base` (the registry's URL). Providers the file does not know stay as they
 * are: they are created at start-up.
 */
export function withListings<S extends { id: string; listings?: ProviderListings }>(
  specs: readonly S[],
  file: ListingFile,
  base: string,
): S[] {
  return specs.map((spec) => {
    const entry = file.providers[spec.id];
    if (!entry) return spec;
    // A copy with the spec's own property descriptors: a spread would evaluate its lazy getters
    // (the defaults, parsed only when asked for) on every start.
    const copy = Object.create(Object.getPrototypeOf(spec), Object.getOwnPropertyDescriptors(spec)) as S;
    copy.listings = { ...entry, module: new URL(entry.module, base).href };
    return copy;
  });
}
