// Toolsets: named groups of tools that users switch on together. The default surface is small
// (the `core` toolset: search across sources, describe any tool, call any tool); deployments and
// clients widen it per process (`--toolsets`, `OPENDATA_MCP_TOOLSETS`, `toolsets:` in the config
// file) or per HTTP request (`/mcp/<toolsets>`, `X-MCP-Toolsets`).
import type { Provider, ToolDefinition, UnavailableTools } from "./provider.ts";

/** The toolset of the cross-source tools, always served. */
export const CORE_TOOLSET = "core";

/** The selection that serves every toolset. */
export const ALL_TOOLSETS = "all";

/** One toolset of the running server. */
export interface Toolset {
  id: string;
  description: string;
  /** The provider its tools come from. */
  provider: string;
  // deno-lint-ignore no-explicit-any
  tools: ToolDefinition<any, any>[];
}

/** A toolset name the server does not know, with the ones it does. */
export class UnknownToolsetError extends Error {
  readonly toolset: string;
  readonly known: readonly string[];

  constructor(toolset: string, known: readonly string[]) {
    super(
      `Unknown toolset "${toolset}"; known toolsets: ${
        [ALL_TOOLSETS, ...known].map((k) => `"${k}"`).join(", ")
      }`,
    );
    this.name = "UnknownToolsetError";
    this.toolset = toolset;
    this.known = known;
  }
}

/** The toolset id a provider's tool belongs to. */
// deno-lint-ignore no-explicit-any
export function toolsetOf(provider: Provider, tool: ToolDefinition<any, any>): string {
  return tool.toolset ?? provider.id;
}

/** Every toolset of the providers, in registration order, and the tools they leave out. */
export class ToolCatalog {
  readonly toolsets: readonly Toolset[];
  readonly unavailable: readonly (UnavailableTools & { provider: string })[];
  #byId: Map<string, Toolset>;

  constructor(providers: readonly Provider[]) {
    const byId = new Map<string, Toolset>();
    for (const provider of providers) {
      const described = new Map((provider.toolsets ?? []).map((t) => [t.id, t.description]));
      for (const tool of provider.tools) {
        const id = toolsetOf(provider, tool);
        let set = byId.get(id);
        if (!set) {
          set = {
            id,
            description: described.get(id) ?? `${provider.id} tools`,
            provider: provider.id,
            tools: [],
          };
          byId.set(id, set);
        }
        set.tools.push(tool);
      }
    }
    this.#byId = byId;
    this.toolsets = [...byId.values()];
    this.unavailable = providers.flatMap((p) => (p.unavailable ?? []).map((u) => ({ ...u, provider: p.id })));
  }

  /** The toolset ids the catalog knows (without `core`, which the server adds). */
  get ids(): string[] {
    return [...this.#byId.keys()];
  }

  get(id: string): Toolset | undefined {
    return this.#byId.get(id);
  }

  /**
   * The toolset ids a selection names: `all` is every toolset, `core` alone the cross-source
   * tools; names are trimmed and case-insensitive. Throws {@linkcode UnknownToolsetError} for a
   * name no provider defines (a toolset left out for want of a key counts as known, and empty).
   */
  resolve(selection: readonly string[]): Set<string> {
    const out = new Set<string>();
    const leftOut = new Set(this.unavailable.map((u) => u.toolset));
    for (const raw of selection) {
      const name = raw.trim().toLowerCase();
      if (name === "") continue;
      if (name === ALL_TOOLSETS) {
        for (const id of this.#byId.keys()) out.add(id);
      } else if (name === CORE_TOOLSET || leftOut.has(name)) {
        continue;
      } else if (this.#byId.has(name)) {
        out.add(name);
      } else {
        throw new UnknownToolsetError(raw.trim(), [CORE_TOOLSET, ...this.#byId.keys()]);
      }
    }
    return out;
  }

  /** The providers restricted to the tools of `selected` toolsets. */
  serve(providers: readonly Provider[], selected: ReadonlySet<string>): Provider[] {
    return providers.map((p) => ({ ...p, tools: p.tools.filter((t) => selected.has(toolsetOf(p, t))) }));
  }
}

/** A comma- or space-separated toolset list (`"fred-data, wikipedia"`), as flags and headers give it. */
export function parseToolsetList(value: string): string[] {
  return value.split(/[,\s]+/).map((s) => s.trim()).filter(Boolean);
}
