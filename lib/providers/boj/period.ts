// Period labels for BOJ survey dates. The API writes every period as digits whose meaning depends
// on the series' frequency (BOJ API manual III.4(5)): years "2025", halves "202502", quarters
// "202504", months "202504", weeks and days "20250418". "202504" reads as April 2025 but is 2025 Q4
// for a quarterly series, so answers show a label made from the frequency and keep the raw value.

/** How a frequency names its periods. */
type Kind = "year" | "fiscal_year" | "half" | "fiscal_half" | "quarter" | "month" | "day";

/** FREQUENCY as the API sends it (ANNUAL, ANNUAL(MAR), …) or as a request names it (CY, FY, …). */
const KINDS: Record<string, Kind> = {
  ANNUAL: "year",
  CY: "year",
  "ANNUAL(MAR)": "fiscal_year",
  FY: "fiscal_year",
  SEMIANNUAL: "half",
  CH: "half",
  "SEMIANNUAL(SEP)": "fiscal_half",
  FH: "fiscal_half",
  QUARTERLY: "quarter",
  Q: "quarter",
  MONTHLY: "month",
  M: "month",
  DAILY: "day",
  D: "day",
  W: "day",
};

function kindOf(frequency: string | undefined): Kind | undefined {
  const f = (frequency ?? "").trim().toUpperCase().replace(/\s+/g, "");
  if (f.startsWith("WEEKLY")) return "day";
  return KINDS[f];
}

/**
 * The label of a survey date for a series of `frequency`: 2025 (calendar year), FY2025 (fiscal
 * year ending in March), 2025H2, FY2025H2 (fiscal half), 2025Q4, 2025-04, 2025-04-18 (weeks
 * are dated by their Monday, as BOJ dates them). A value that does not fit the frequency, or a
 * frequency not known (except eight digits, which are always a day), gives the raw value back.
 */
export function periodLabel(raw: string, frequency: string | undefined): string {
  const d = raw.trim();
  // Without a frequency (trimmed answers), eight digits can only be a day; six or four are ambiguous.
  const kind = kindOf(frequency) ?? (/^\d{8}$/.test(d) ? "day" : undefined);
  switch (kind) {
    case "year":
      return /^\d{4}$/.test(d) ? d : raw;
    case "fiscal_year":
      return /^\d{4}$/.test(d) ? `FY${d}` : raw;
    case "half":
    case "fiscal_half": {
      const m = /^(\d{4})0?([12])$/.exec(d);
      return m ? `${kind === "fiscal_half" ? "FY" : ""}${m[1]}H${m[2]}` : raw;
    }
    case "quarter": {
      const m = /^(\d{4})0?([1-4])$/.exec(d);
      return m ? `${m[1]}Q${m[2]}` : raw;
    }
    case "month": {
      const m = /^(\d{4})(0[1-9]|1[0-2])$/.exec(d);
      return m ? `${m[1]}-${m[2]}` : raw;
    }
    case "day": {
      const m = /^(\d{4})(\d{2})(\d{2})$/.exec(d);
      return m ? `${m[1]}-${m[2]}-${m[3]}` : raw;
    }
    default:
      return raw;
  }
}
