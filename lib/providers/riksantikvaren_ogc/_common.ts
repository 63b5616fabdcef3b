// What the riksantikvaren-* tools share: dependencies, argument fields, dataset lookup, the
// feature shape of results, licences, and the page fetch that copes with cut-off bodies.
import { z } from "zod";
import type { Clock } from "../../clock.ts";
import { UpstreamError } from "../../errors.ts";
import type { QueryValue } from "../../http/fetch_client.ts";
import { roundLatLon } from "../../geo/latlon.ts";
import { representativePoint } from "../../geo/geojson.ts";
import type { ToolCallContext } from "../../mcp/provider.ts";
import type { CallOptions, OgcClient } from "./client.ts";
import type { RiksantikvarenOgcSettings } from "./settings.ts";
import type { FeatureOut, LicenceOut } from "./format.ts";
import { compactProperties, defaultLicence, fallbackPoint, heritageFields } from "./heritage.ts";
import type { FeaturePage, Licence, RawFeature } from "./parse.ts";

/** Everything the tools share. */
export interface OgcToolDeps {
  client: OgcClient;
  settings: RiksantikvarenOgcSettings;
  /** The clock the call deadline is measured on (the HTTP runtime's). */
  clock: Clock;
}

/** The annotations of every riksantikvaren-* tool. */
export const READ_ONLY = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: true,
} as const;

/**
 * Collections and the dataset (API) that serves each, so a caller may name just the collection.
 * The first four and fredabygninger/kulturmiljoer are in recorded api.ra.no bodies
 * (tests/fixtures/ra_ogc/); the rest are from public client code. riksantikvaren-collections
 * reads the real list, and an explicit `dataset` always wins.
 */
export const KNOWN_DATASETS: Readonly<Record<string, string>> = {
  lokaliteter: "LokaliteterEnkeltminnerOgSikringssoner",
  enkeltminner: "LokaliteterEnkeltminnerOgSikringssoner",
  sikringssoner: "LokaliteterEnkeltminnerOgSikringssoner",
  brukerminner: "brukerminner",
  kulturminner: "kulturminner",
  kulturmiljoer: "KulturminnerKulturmiljoer",
  fredabygninger: "KulturminnerFredaBygninger",
  sefrakbygninger: "KulturminnerSEFRAKbygninger",
  brannvern: "brannvern",
  verneverdigtettetrehusmiljo: "KulturminnerVerneverdigTetteTrehusmiljo",
};

/** A dataset id, optionally with a version path (`id/v1`). */
export const DATASET_RE = /^[A-Za-z0-9_-]{1,100}(\/v\d{1,3})?$/;
/** A collection id. */
export const COLLECTION_RE = /^[A-Za-z0-9_-]{1,100}$/;
/** A feature id: never a path. */
export const ID_RE = /^(?!\.{1,2}$)[A-Za-z0-9._:-]{1,200}$/;
/** A property name a text filter may search. */
export const PROPERTY_RE = /^[A-Za-z_][A-Za-z0-9_æøåÆØÅ]{0,63}$/;

/** The toolset of every riksantikvaren-* tool. */
export const TOOLSET = "riksantikvaren";

/** The `dataset` argument (checked by refinement: the served schema stays short). */
export const datasetField = z.string()
  .refine((v) => DATASET_RE.test(v), "letters, digits, _ and - only (an id from riksantikvaren-collections)")
  .describe("Dataset id (default: from the collection)");

/** The `collection` argument. */
export const collectionField = z.string()
  .refine((v) => COLLECTION_RE.test(v), "letters, digits, _ and - only")
  .describe('Collection, e.g. "lokaliteter", "enkeltminner", "brukerminner"');

/** The dataset of a collection: the given one, a known one, or the collection's own name. */
export function resolveDataset(dataset: string | undefined, collection: string): string {
  return dataset ?? KNOWN_DATASETS[collection.toLowerCase()] ?? collection;
}

/** The per-call options of upstream requests. */
export function callOptions(ctx: ToolCallContext): CallOptions {
  return { signal: ctx.signal, logger: ctx.logger };
}

/**
 * Fetches a page of items. api.ra.no is reported to send cut-off bodies for large pages (with
 * HTTP 200), so a body that does not decode is asked for again with half the page size, twice.
 * Returns the page size that was finally asked for.
 */
export async function itemsWithFallback(
  deps: OgcToolDeps,
  dataset: string,
  collection: string,
  query: Record<string, QueryValue>,
  call: CallOptions,
  warnings: string[],
): Promise<{ page: FeaturePage; url: string; limit: number }> {
  let q = { ...query };
  for (let attempt = 0;; attempt++) {
    try {
      const r = await deps.client.items({ dataset, collection }, q, call);
      return { ...r, limit: Number(q["limit"]) };
    } catch (e) {
      const limit = Number(q["limit"]);
      if (!(e instanceof UpstreamError) || e.errorType !== "DECODE_ERROR" || attempt >= 2 || !(limit > 10)) {
        throw e;
      }
      const smaller = Math.ceil(limit / 2);
      warnings.push(`api.ra.no sent a broken page for limit=${limit}; asked again with limit=${smaller}`);
      q = { ...q, limit: smaller };
    }
  }
}

/** Whether a record has a location: a geometry (readable or not) or a fallback point. */
export function hasLocation(raw: RawFeature): boolean {
  return raw.geometry !== null || raw.geometryUnreadable || fallbackPoint(raw.properties) !== null;
}

/** One feature in results. */
export function featureOut(
  raw: RawFeature,
  deps: OgcToolDeps,
  dataset: string,
  collection: string,
  full: boolean,
): FeatureOut {
  const fields = heritageFields(raw.properties);
  const point = (raw.geometry ? representativePoint(raw.geometry) : null) ?? fallbackPoint(raw.properties);
  const p = point ? roundLatLon(point) : null;
  const apiPath = `${dataset}/collections/${collection}/items${
    raw.id ? `/${encodeURIComponent(raw.id)}` : ""
  }`;
  return {
    id: raw.id,
    ...fields,
    description: full || !fields.description ? fields.description : clip(fields.description, 500),
    lat: p?.lat ?? null,
    lon: p?.lon ?? null,
    geometry_type: raw.geometry?.type ?? null,
    geometry: null,
    geometry_note: null,
    api_url: deps.client.url(apiPath, { f: "json" }),
    properties: full ? capStrings(raw.properties) : compactProperties(raw.properties),
  };
}

/** The licence line: the data's own, else the dataset's known one. */
export function licenceOut(fromData: Licence | null, dataset: string, collection: string): LicenceOut {
  const known = defaultLicence(dataset, collection);
  if (fromData) return { name: fromData.name, url: fromData.url, note: known.note };
  return known;
}

/** Escapes a CQL2 string literal's quotes and LIKE wildcards. */
export function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`).replaceAll("'", "''");
}

/** `text` cut to `max` characters with an ellipsis. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function capStrings(props: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(props)) out[k] = typeof v === "string" ? clip(v, 5000) : v;
  return out;
}
