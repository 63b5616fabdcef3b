// Summary fields from kart.ra.no attributes (camelCase names such as kulturminneKategori,
// linkKulturminnesok). Names are matched case-insensitively with æ, ø, å folded, because
// identify may key attributes by alias rather than by field name.

/** The summary fields of one feature (null when the layer has none). */
export type ArcgisHeritage = {
  name: string | null;
  /** Category (kulturminneKategori) and original function. */
  category: string | null;
  /** Protection status: vernetype, law and section. */
  protection: string | null;
  municipality: string | null;
  dating: string | null;
  /** Description (informasjon), shortened. */
  description: string | null;
  kulturminnesok_url: string | null;
};

/** Folds a field name: lower case, æ/ø/å spelled out, punctuation dropped. */
export function foldKey(key: string): string {
  return key.toLowerCase().replaceAll("æ", "ae").replaceAll("ø", "o").replaceAll("å", "a").replace(
    /[^a-z0-9]/g,
    "",
  );
}

/** The first attribute whose folded name is one of `names`, as text. */
export function pick(attrs: Record<string, unknown>, names: readonly string[]): string | null {
  const folded = new Map<string, unknown>();
  for (const [k, v] of Object.entries(attrs)) if (!folded.has(foldKey(k))) folded.set(foldKey(k), v);
  for (const n of names) {
    const v = folded.get(n);
    if (typeof v === "number" && Number.isFinite(v)) return String(v);
    if (typeof v === "string" && v.trim() !== "" && v.trim().toLowerCase() !== "null") return v.trim();
  }
  return null;
}

/** Reads the summary fields; `layerName` decides whether a locality link may be built. */
export function arcgisHeritage(attrs: Record<string, unknown>, layerName: string | null): ArcgisHeritage {
  const category = pick(attrs, [
    "kulturminnekategori",
    "kategori",
    "enkeltminnekategori",
    "lokalitetskategori",
  ]);
  const kind = pick(attrs, ["kulturminneopprinneligfunksjon", "enkeltminneart", "lokalitetsart", "hustype"]);
  const vernetype = pick(attrs, ["vernetype", "vernestatus"]);
  const law = pick(attrs, ["vernelov"]);
  const paragraph = pick(attrs, ["verneparagraf"]);
  const lawText = [law, paragraph ? (/^§/.test(paragraph) ? paragraph : `§ ${paragraph}`) : null].filter(
    Boolean,
  )
    .join(" ");
  const munName = pick(attrs, ["kommunenavn"]);
  const munCode = pick(attrs, ["kommune", "kommunenr", "kommunenummer"]);
  return {
    name: pick(attrs, ["navn", "name", "tittel"]),
    category: category && kind && category !== kind ? `${category} – ${kind}` : category ?? kind,
    protection: [vernetype, lawText || null].filter(Boolean).join(", ") || null,
    municipality: munName && munCode && munName !== munCode ? `${munName} (${munCode})` : munName ?? munCode,
    dating: pick(attrs, ["kulturminnedatering", "datering"]),
    description: pick(attrs, ["informasjon", "beskrivelse"]),
    kulturminnesok_url: kulturminnesokUrl(attrs, layerName),
  };
}

function kulturminnesokUrl(attrs: Record<string, unknown>, layerName: string | null): string | null {
  const link = pick(attrs, ["linkkulturminnesok", "kulturminnesok"]);
  if (link && /^https?:\/\//i.test(link)) return link;
  // lokalId "22228" names a locality; "22228-7" a monument within locality 22228.
  const locality = pick(attrs, ["lokalitetid", "lokalitetsid"]) ??
    (layerName && /lokalitet|enkeltminne|sikringssone/i.test(layerName) ? pick(attrs, ["lokalid"]) : null);
  const m = locality ? /^(\d{1,12})(-\d+)?$/.exec(locality) : null;
  return m ? `https://kulturminnesok.no/ra/lokalitet/${m[1]}` : null;
}
