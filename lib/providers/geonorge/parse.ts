// Readers of the kartkatalog search answer. The field names come from the catalogue's source
// (Models/Api/SearchResult.cs, Metadata.cs: PascalCase, as ASP.NET writes them by default) and a
// real page Kartverket published (tests/fixtures/geonorge/real_search_page_limit25.json). camelCase
// is read too, in case the serializer is configured that way. A body that is not an object with a
// `Results` list is a DECODE_ERROR, never "no entries".
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
  /** A service's own GetCapabilities address (services only: for datasets the field holds the download URL). */
  capabilities_url: string | null;
  /** The download API's capabilities for this uuid, only when a distribution is `GEONORGE:DOWNLOAD`. */
  download_api_url: string | null;
  /** The WMS capabilities of the service that shows a dataset (`ServiceDistributionUrlForDataset`). */
  wms_url: string | null;
  /** The WFS capabilities of the service that serves a dataset (`ServiceWfsDistributionUrlForDataset`). */
  wfs_url: string | null;
  /** The map services that show a dataset (`DatasetServicesWithShowMapLink`). */
  map_services: MapService[];
  /** The metadata's date as an Oslo calendar date (the catalogue writes Oslo midnight in UTC). */
  date: string | null;
  /** The catalogue's `Date` as sent. */
  date_raw: string | null;
};

/** A map service that shows a dataset. */
export type MapService = {
  uuid: string | null;
  title: string | null;
  protocol: string | null;
  capabilities_url: string;
};

/** The distribution protocol of GeoNorge's download API. */
const DOWNLOAD = "GEONORGE:DOWNLOAD";

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
      capabilities_url: type === "service" || type === "servicelayer"
        ? web(get(o, "GetCapabilitiesUrl"))
        : null,
      download_api_url: downloadApi(o, uuid, protocol, url),
      wms_url: web(get(o, "ServiceDistributionUrlForDataset")),
      wfs_url: web(get(o, "ServiceWfsDistributionUrlForDataset")),
      map_services: mapServices(get(o, "DatasetServicesWithShowMapLink")),
      date: osloDate(text(get(o, "Date"))),
      date_raw: text(get(o, "Date")),
    });
  }
  const n = get(root, "NumFound");
  return { numFound: typeof n === "number" && Number.isInteger(n) && n >= 0 ? n : null, entries };
}

/**
 * The download API address of an entry: only when its distribution, or one of its
 * `Distributions` ("organization|protocol|url|format|…"), is `GEONORGE:DOWNLOAD`; the API is the
 * distribution's capabilities base (Kartverket's or another agency's) followed by the uuid.
 */
function downloadApi(
  o: Record<string, unknown>,
  uuid: string,
  protocol: string | null,
  url: string | null,
): string | null {
  let base = protocol === DOWNLOAD ? url : null;
  if (!base) {
    for (const d of arr(get(o, "Distributions"))) {
      if (typeof d !== "string") continue;
      const [, p, u] = d.split("|");
      if (p?.trim() === DOWNLOAD && web(u)) {
        base = web(u);
        break;
      }
    }
  }
  if (!base) return null;
  return base.endsWith("/") ? `${base}${uuid}` : base.includes(uuid) ? base : `${base}/${uuid}`;
}

/** `DatasetServicesWithShowMapLink[]` with a usable capabilities address (empty ones are left out). */
function mapServices(v: unknown): MapService[] {
  const out: MapService[] = [];
  for (const item of arr(v)) {
    const s = obj(item);
    const caps = web(get(s, "GetCapabilitiesUrl"));
    if (!s || !caps) continue;
    out.push({
      uuid: text(get(s, "Uuid")),
      title: text(get(s, "Title")),
      protocol: text(get(s, "DistributionProtocol")),
      capabilities_url: caps,
    });
  }
  return out;
}

const OSLO = new Intl.DateTimeFormat("en-CA", {
  timeZone: "Europe/Oslo",
  year: "numeric",
  month: "2-digit",
  day: "2-digit",
});

/**
 * The Oslo calendar date of a catalogue `Date`: the catalogue stores dates as Oslo midnight and
 * writes them in UTC ("2025-12-09T23:00:00Z" is 10 December), so the UTC date is a day early.
 * A value without a time is a date already.
 */
export function osloDate(v: string | null): string | null {
  if (!v) return null;
  if (/^\d{4}-\d{2}-\d{2}$/.test(v)) return v;
  const t = Date.parse(v);
  if (Number.isNaN(t)) return null;
  // A time without a zone is Oslo time already (as the older API wrote it).
  if (!/(Z|[+-]\d{2}:?\d{2})$/i.test(v)) return v.slice(0, 10);
  return OSLO.format(new Date(t));
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
