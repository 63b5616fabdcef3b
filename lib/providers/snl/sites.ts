// The encyclopedias that share SNL's API, each on its own host. The `site` argument is checked
// against this list, so a caller can never name another host.

/** A sister site: its host and name. */
export interface Site {
  host: string;
  name: string;
}

/** The Norwegian encyclopedias served by the SNL platform. */
export const SITES = {
  snl: { host: "snl.no", name: "Store norske leksikon" },
  nbl: { host: "nbl.snl.no", name: "Norsk biografisk leksikon" },
  sml: { host: "sml.snl.no", name: "Store medisinske leksikon" },
  nkl: { host: "nkl.snl.no", name: "Norsk kunstnerleksikon" },
  lille: { host: "lille.snl.no", name: "Lille norske leksikon" },
} as const satisfies Record<string, Site>;

/** A site id: `snl`, `nbl`, `sml`, `nkl` or `lille`. */
export type SiteId = keyof typeof SITES;

/** Every site id, `snl` first. */
export const SITE_IDS = Object.keys(SITES) as [SiteId, ...SiteId[]];

/** The default base URL; sister sites then use their own hosts. */
export const DEFAULT_BASE_URL = "https://snl.no";

/** Whether `baseUrl` is the default (any other value sends every site to that one origin). */
export function isDefaultBase(baseUrl: string): boolean {
  return baseUrl.replace(/\/+$/, "") === DEFAULT_BASE_URL;
}

/** The origin (no trailing slash) that serves `site`. */
export function originFor(baseUrl: string, site: SiteId): string {
  return isDefaultBase(baseUrl) ? `https://${SITES[site].host}` : baseUrl.replace(/\/+$/, "");
}

/** The site a page URL's host belongs to (`www.` allowed), or null for any other host. */
export function siteOfHost(host: string): SiteId | null {
  const bare = host.toLowerCase().replace(/^www\./, "");
  for (const id of SITE_IDS) if (SITES[id].host === bare) return id;
  return null;
}
