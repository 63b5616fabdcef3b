// Interactive views (MCP Apps, extension `io.modelcontextprotocol/ui`, spec 2026-01-26): the
// `ui://` resources the core serves, and the capability gate. Only a client that advertises the
// extension sees a tool's `_meta.ui` and gets view models in results; every other client gets
// exactly what it got before views existed.
import { VIEW_IDS } from "./model.ts";
import type { ViewId } from "./model.ts";

export { VIEW_IDS, VIEW_META_KEY } from "./model.ts";
export type { ViewId, ViewModel } from "./model.ts";

/** The extension's identifier in `capabilities.extensions`. */
export const UI_EXTENSION = "io.modelcontextprotocol/ui";

/** The MIME type of an MCP App's HTML. */
export const VIEW_MIME = "text/html;profile=mcp-app";

/** The 2026-07-28 request `_meta` key that carries the client's capabilities. */
export const CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";

/**
 * The router view: what opendata_call names, since one tool names one view. It renders whichever
 * view a result's model asks for (by loading that view's resource through the host).
 */
export const ROUTER_VIEW = "view" as const;

/** A view, or the router. */
export type ServedViewId = ViewId | typeof ROUTER_VIEW;

/** The resource URI of a view. */
export function viewUri(id: ServedViewId): string {
  return `ui://opendata-mcp/${id}.html`;
}

/** What views are built with. */
export interface ViewOptions {
  /** Map tiles of the places view (`{z}/{x}/{y}` template), or null for none. */
  tilesUrl: string | null;
}

/** View options without map tiles (one object, so the views built for it are kept). */
const NO_TILES: ViewOptions = { tilesUrl: null };

/** A view as a resource: its listing and its one content item. */
export interface ViewResource {
  id: ServedViewId;
  uri: string;
  name: string;
  title: string;
  description: string;
  /** `_meta.ui` of both the listing and the content (CSP, border). */
  meta: { ui: { csp: { connectDomains: string[]; resourceDomains: string[] }; prefersBorder: boolean } };
  /** The HTML, built on the first read (its module loaded then: listing tools needs none) and kept. */
  html(): Promise<string>;
}

const DESCRIPTIONS: Record<ServedViewId, [string, string]> = {
  series: [
    "Series chart",
    "Time series as a zoomable line chart with units, frequency, latest value and source",
  ],
  places: [
    "Places map",
    "Features on a map with popups, the searched area drawn, and the next page on demand",
  ],
  documents: ["Documents list", "Documents and articles with citation, date, country, type and links"],
  view: ["Any view", "Shows a result of opendata_call in the view its data calls for: chart, map or list"],
};

/**
 * The view resources, and the router when there is any; their HTML built lazily and kept, since
 * it never changes while serving. The router hands its frame to the places view, so it declares
 * the tiles too.
 */
export function viewResources(ids: Iterable<ViewId>, options: ViewOptions = NO_TILES): ViewResource[] {
  const wanted = new Set<ServedViewId>(ids);
  // Every server instance (each session, each 2026-07-28 request) asks for the same few lists:
  // one list per options and set of views, so each view's HTML is also built once.
  const key = [...wanted].sort().join(",");
  let byIds = builtViews.get(options);
  if (!byIds) builtViews.set(options, byIds = new Map());
  const built = byIds.get(key);
  if (built) return built;
  const views = buildViews(wanted, options);
  byIds.set(key, views);
  return views;
}

const builtViews = new WeakMap<ViewOptions, Map<string, ViewResource[]>>();

function buildViews(wanted: Set<ServedViewId>, options: ViewOptions): ViewResource[] {
  if (wanted.size) wanted.add(ROUTER_VIEW);
  const all: ServedViewId[] = [...VIEW_IDS, ROUTER_VIEW];
  return all.filter((id) => wanted.has(id)).map((id) => {
    const tiles = (id === "places" || id === ROUTER_VIEW) && options.tilesUrl
      ? [new URL(options.tilesUrl.replace(/[{}]/g, "")).origin]
      : [];
    let html: Promise<string> | undefined;
    const [title, description] = DESCRIPTIONS[id];
    return {
      id,
      uri: viewUri(id),
      name: `view-${id}`,
      title,
      description,
      meta: { ui: { csp: { connectDomains: [], resourceDomains: tiles }, prefersBorder: true } },
      html: () => html ??= viewHtml(id, options),
    };
  });
}

/** One view's HTML; each view's module is a literal import, so bundles and binaries hold it. */
async function viewHtml(id: ServedViewId, options: ViewOptions): Promise<string> {
  if (id === ROUTER_VIEW) return (await import("./_router.ts")).routerHtml();
  if (id === "series") return (await import("./_series.ts")).seriesHtml();
  if (id === "places") return (await import("./_places.ts")).placesHtml({ tilesUrl: options.tilesUrl });
  return (await import("./_documents.ts")).documentsHtml();
}

/**
 * True when `capabilities` advertise MCP Apps with HTML views
 * (`extensions["io.modelcontextprotocol/ui"].mimeTypes` names {@linkcode VIEW_MIME}).
 */
export function rendersViews(capabilities: unknown): boolean {
  const ext = (capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions
    ?.[UI_EXTENSION];
  const types = (ext as { mimeTypes?: unknown } | undefined)?.mimeTypes;
  return Array.isArray(types) && types.includes(VIEW_MIME);
}

/**
 * The client capabilities a request was made under: its own `_meta` envelope (2026-07-28, and
 * any stateless request that carries one), else what the connection's `initialize` declared.
 */
export function requestCapabilities(ctx: unknown, initialized: unknown): unknown {
  const req = (ctx as { mcpReq?: { envelope?: Record<string, unknown>; _meta?: Record<string, unknown> } })
    ?.mcpReq;
  return req?.envelope?.[CLIENT_CAPABILITIES_KEY] ?? req?._meta?.[CLIENT_CAPABILITIES_KEY] ?? initialized;
}

/** A tools/list entry naming its view (a copy: the cached entry other clients get stays as it is). */
export function withViewMeta<T extends { _meta?: Record<string, unknown> | undefined }>(
  tool: T,
  id: ServedViewId,
): T {
  const uri = viewUri(id);
  // `ui/resourceUri` is the flat key of hosts that predate `_meta.ui` (ext-apps sets both too).
  return {
    ...tool,
    _meta: { ...tool._meta, ui: { resourceUri: uri, visibility: ["model", "app"] }, "ui/resourceUri": uri },
  };
}
