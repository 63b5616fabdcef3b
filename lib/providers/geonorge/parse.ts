// Readers of the kartkatalog search answer. No real body was recorded; the field names come from
// the catalogue's source (Models/Api/SearchResult.cs, Metadata.cs: PascalCase, as ASP.NET writes
// them by default). camelCase is read too, in case the serializer is configured that way. A body
// that is not an object with a `Results` list is a DECODE_ERROR, never "no entries".
import { ToolError } from "../../errors.ts";

/** One catalogue entry, as the tool reports it. */
export type CatalogEntry = {
  uuid: string;
  title: string;
  type: string | null;
  organization: string | null;
  abstract: string | null;
  open_data: boolean | null;
  access: string | null;
  distribution: { protocol: string | null; url: string | null; name: string | null } | null;
  details_url: string;
  capabilities_url: string | null;
  download_api_url: string | null;
  /** The metadata's date, as the catalogue gives it (when it does). */
  date: string | null;
};

/**
 * Reads `{NumFound, Results[]}`; entries without a uuid or title are skipped. A root that is not
 * an object, or whose `Results` is not a list (absent is accepted only with `NumFound` 0), throws
 * a DECODE_ERROR.
 */
export function parseSearch(body: unknown): { numFound: number | null; entries: CatalogEntry[] } {
  const root = obj(body);
  const results = get(root, "Results");
  const none = results === undefined && get(root, "NumFound") === 0;
  if (!root || !(Array.isArray(results) || none)) {
    const got = !root
      ? describe(body)
      : results === undefined
      ? 'an object without "Results"'
      : `an object whose "Results" is ${describe(results)}`;
    throw new ToolError(
      "DECODE_ERROR",
      `kartkatalog.geonorge.no did not answer with search results: it sent ${got}`,
      {
        hint: "The catalogue sent a body of the wrong shape; try again later, or report it if it persists",
      },
    );
  }
  const list = arr(results);
  const entries: CatalogEntry[] = [];
  for (const item of list) {
    const o = obj(item);
    const uuid = text(get(o, "Uuid"));
    const title = text(get(o, "Title"));
    if (!o || !uuid || !title || !/^[0-9a-f-]{8,64}$/i.test(uuid)) continue;
    const type = text(get(o, "Type"));
    const protocol = text(get(o, "DistributionProtocol"));
    const url = web(get(o, "DistributionUrl"));
    const name = text(get(o, "DistributionName"));
    const open = get(o, "IsOpenData") ?? get(o, "AccessIsOpendata");
    entries.push({
      uuid,
      title,
      type,
      organization: text(get(o, "Organization")),
      abstract: text(get(o, "Abstract")),
      open_data: typeof open === "boolean" ? open : null,
      access: text(get(o, "AccessConstraint")) ?? text(get(o, "DataAccess")),
      distribution: protocol || url || name ? { protocol, url, name } : null,
      details_url: web(get(o, "ShowDetailsUrl")) ?? `https://kartkatalog.geonorge.no/metadata/uuid/${uuid}`,
      capabilities_url: web(get(o, "GetCapabilitiesUrl")),
      download_api_url: type === "dataset" ? `https://nedlasting.geonorge.no/api/capabilities/${uuid}` : null,
      date: text(get(o, "Date")),
    });
  }
  const n = get(root, "NumFound");
  return { numFound: typeof n === "number" && Number.isInteger(n) && n >= 0 ? n : null, entries };
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  return `a ${typeof v}`;
}

function get(o: Record<string, unknown> | undefined, pascal: string): unknown {
  if (!o) return undefined;
  return o[pascal] ?? o[pascal[0]!.toLowerCase() + pascal.slice(1)];
}

function obj(v: unknown): Record<string, unknown> | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : undefined;
}

function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function text(v: unknown): string | null {
  return typeof v === "string" && v.trim() !== "" ? v.trim() : null;
}

/** An http(s) URL to show (never fetched), or null. */
function web(v: unknown): string | null {
  const t = text(v);
  if (!t) return null;
  try {
    const u = new URL(t);
    return u.protocol === "https:" || u.protocol === "http:" ? u.toString() : null;
  } catch {
    return null;
  }
}
