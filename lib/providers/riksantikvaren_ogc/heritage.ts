// Turns a feature's properties into the fields a model asks about: name, category, protection,
// municipality, dating and the Kulturminnesøk link. api.ra.no's datasets spell the same idea
// differently (`navn` or `tittel`, `linkKulturminnesøk` or `linkkulturminnesok`), so keys are
// matched case-insensitively with æ, ø, å folded.
import { parseLatLonText } from "../../geo/latlon.ts";
import type { LatLon } from "../../geo/geojson.ts";
import { parseGeometry, representativePoint } from "../../geo/geojson.ts";
import type { Licence } from "./parse.ts";
import { asObject, str } from "./parse.ts";
import { labelled, municipalityName } from "./codes.ts";

/** The summary fields of one heritage feature (null when the data has none). */
export type HeritageFields = {
  name: string | null;
  /** Category and kind (e.g. kulturminneKategori, lokalitetsart). */
  category: string | null;
  /** Protection status: vernetype, law and section. */
  protection: string | null;
  municipality: string | null;
  county: string | null;
  dating: string | null;
  /** Description (informasjon/beskrivelse); shortened in lists. */
  description: string | null;
  kulturminnesok_url: string | null;
  /** Photos (user-contributed memories only), each with its own licence. */
  images: { url: string; licence: string | null; photographer: string | null }[];
};

/** Folds a property name for matching: lower case, æ/ø/å spelled out, punctuation dropped. */
export function foldKey(key: string): string {
  return key.toLowerCase().replaceAll("æ", "ae").replaceAll("ø", "o").replaceAll("å", "a").replace(
    /[^a-z0-9]/g,
    "",
  );
}

/** The first property whose folded name is one of `names`, as a trimmed string or number text. */
export function pick(props: Record<string, unknown>, names: readonly string[]): string | null {
  const folded = new Map<string, unknown>();
  for (const [k, v] of Object.entries(props)) {
    const f = foldKey(k);
    if (!folded.has(f)) folded.set(f, v);
  }
  for (const n of names) {
    const v = folded.get(n);
    if (typeof v === "number" && Number.isFinite(v)) return String(v);
    const s = str(v);
    if (s !== null && s.toLowerCase() !== "null") return s;
  }
  return null;
}

/** Reads the summary fields from a feature's properties. */
export function heritageFields(props: Record<string, unknown>): HeritageFields {
  const category = pick(props, [
    "kulturminnekategori",
    "enkeltminnekategori",
    "lokalitetskategori",
    "kategori",
    "minnetype",
  ]);
  const kind = pick(props, ["enkeltminneart", "lokalitetsart", "kulturminneart", "art", "hustype"]);
  const vernetype = labelled("vernetype", pick(props, ["vernetype", "vernestatus", "vern"]));
  const law = labelled("vernelov", pick(props, ["vernelov"]));
  const paragraph = pick(props, ["verneparagraf"]);
  const lawText = [law, paragraph ? (/^§/.test(paragraph) ? paragraph : `§ ${paragraph}`) : null].filter(
    Boolean,
  )
    .join(" ");
  const protection = [vernetype, lawText || null].filter(Boolean).join(", ") || null;
  const munCode = pick(props, ["kommune", "kommunenr", "kommunenummer"]);
  const munName = pick(props, ["kommunenavn"]) ?? municipalityName(munCode);
  const municipality = munName && munCode && munName !== munCode
    ? `${munName} (${munCode})`
    : munName ?? munCode;
  return {
    name: pick(props, ["navn", "tittel", "name", "title", "stedsnavn"]),
    category: category && kind && category !== kind
      ? `${labelled("kulturminnekategori", category)} – ${kind}`
      : labelled("kulturminnekategori", category) ?? kind,
    protection,
    municipality,
    county: pick(props, ["fylkesnavn", "fylke"]),
    dating: labelled(
      "kulturminnedatering",
      pick(props, [
        "kulturminnedatering",
        "datering",
        "kulturminnedateringsperiode",
        "periode",
        "tidsperiode",
      ]),
    ),
    description: pick(props, DESCRIPTION_KEYS),
    kulturminnesok_url: kulturminnesokUrl(props),
    images: images(props),
  };
}

/** The properties a site's description is read from, first found wins. */
export const DESCRIPTION_KEYS = ["informasjon", "beskrivelse", "description"];

/** The Kulturminnesøk page: the data's own link, else one built from a locality id. */
export function kulturminnesokUrl(props: Record<string, unknown>): string | null {
  const link = pick(props, ["linkkulturminnesok", "kulturminnesok", "kulturminnesokurl"]);
  if (link && isWebUrl(link)) return link;
  const generic = pick(props, ["link"]);
  if (generic && isWebUrl(generic) && /(^|\.)kulturminnesok\.no$/i.test(new URL(generic).hostname)) {
    return generic;
  }
  const locality = pick(props, ["lokalitetid", "lokalitetsid"]);
  if (locality && /^[A-Za-z0-9-]{1,64}$/.test(locality)) {
    return `https://kulturminnesok.no/ra/lokalitet/${encodeURIComponent(locality)}`;
  }
  return null;
}

/**
 * A point for the feature when its geometry has none: `senterpunkt` (a GeoJSON point) or
 * Kulturminnesøk's `gpsposisjon` text, which is "lat, lon" (latitude first).
 */
export function fallbackPoint(props: Record<string, unknown>): LatLon | null {
  for (const [k, v] of Object.entries(props)) {
    if (foldKey(k) === "senterpunkt") {
      const g = parseGeometry(v);
      if (g) return representativePoint(g);
    }
  }
  const text = pick(props, ["gpsposisjon"]);
  return text ? parseLatLonText(text) ?? null : null;
}

/** Properties with scalar values only, long strings shortened: for lists. */
export function compactProperties(props: Record<string, unknown>, maxChars = 300): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(props)) {
    if (typeof v === "string") out[k] = v.length > maxChars ? `${v.slice(0, maxChars - 1)}…` : v;
    else if (typeof v === "number" || typeof v === "boolean" || v === null) out[k] = v;
  }
  return out;
}

/** The licence of a dataset when the data names none. */
export function defaultLicence(dataset: string, collection: string): Licence & { note: string | null } {
  if (/brukerminne/i.test(`${dataset} ${collection}`)) {
    return {
      name: "CC BY 4.0",
      url: "https://creativecommons.org/licenses/by/4.0/",
      note:
        "User-contributed memories from Kulturminnesøk, not quality-assured by Riksantikvaren; photos carry their own licence (see each image). Credit the contributor and Riksantikvaren",
    };
  }
  return {
    name: "NLOD 2.0 (Norwegian Licence for Open Government Data)",
    url: "https://data.norge.no/nlod/en/2.0",
    note: "Credit: Riksantikvaren (the Norwegian Directorate for Cultural Heritage)",
  };
}

function images(props: Record<string, unknown>): HeritageFields["images"] {
  const list = Object.entries(props).find(([k]) => foldKey(k) === "bilder")?.[1];
  if (!Array.isArray(list)) return [];
  const out: HeritageFields["images"] = [];
  for (const entry of list.slice(0, 5)) {
    const o = asObject(entry);
    const url = o ? pick(o, ["url", "href"]) : str(entry);
    if (!url || !isWebUrl(url)) continue;
    out.push({
      url,
      licence: o ? pick(o, ["lisens", "license", "licence"]) : null,
      photographer: o ? pick(o, ["fotograf", "photographer"]) : null,
    });
  }
  return out;
}

function isWebUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return u.protocol === "https:" || u.protocol === "http:";
  } catch {
    return false;
  }
}
