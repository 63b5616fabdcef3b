// Labels of Riksantikvaren's code-list values: api.ra.no returns codes ("UAV", "020",
// "E-ARK", "3218") that are correct but unreadable. The published lists are kept as data in
// codes/ with their source (codes/README.md); a code not in its list stays as it is.
import kategori from "./codes/kulturminnekategori.json" with { type: "json" };
import datering from "./codes/kulturminnedatering.json" with { type: "json" };
import kommuner from "./codes/kommuner.json" with { type: "json" };
import vernelov from "./codes/vernelov.json" with { type: "json" };
import vernetype from "./codes/vernetype.json" with { type: "json" };

/** The code lists with labels. */
const LISTS: Record<CodeList, Record<string, string>> = {
  kulturminnekategori: kategori.codes,
  kulturminnedatering: datering.codes,
  vernelov: vernelov.codes,
  vernetype: vernetype.codes,
};

/** The code lists that have published labels. */
export type CodeList = "kulturminnekategori" | "kulturminnedatering" | "vernelov" | "vernetype";

/**
 * The value with the label of each code beside it: "UAV (Uavklart vernestatus)", and for a list
 * of codes ("020, 040") each one. Codes not in the list, and free text, are left as they are.
 */
export function labelled(list: CodeList, value: string | null): string | null {
  if (value === null) return null;
  const labels = LISTS[list];
  return value.split(/\s*,\s*/).map((code) => {
    const label = labels[code];
    return label ? `${code} (${label})` : code;
  }).join(", ");
}

/** The name of a municipality number (SSB's classification 131), or null. */
export function municipalityName(code: string | null): string | null {
  if (code === null) return null;
  const padded = /^\d{3}$/.test(code) ? `0${code}` : code;
  return (kommuner.codes as Record<string, string>)[padded] ?? null;
}
