// What people ask for, in the words the BOJ's own metadata uses: "USD/JPY", "yen",
// "policy rate", "CPI", "Tankan" point at the databases that hold them and at the words their
// series names carry (in English and Japanese). The series themselves come from the API's
// getMetadata of those databases (cached), so every series of the database is found, not only
// those of the local catalogue. Questions this list does not know are searched in the metadata of
// the databases their words name (search.ts `databasesFor`).

/** One kind of question: the words that ask it, where the BOJ answers it, and its words there. */
export interface Ask {
  /** Matched against the folded query. */
  pattern: RegExp;
  /** The databases that hold the answer, best first. */
  dbs: readonly string[];
  /** Words a series name must hold (any of them), in the metadata's English and Japanese; empty: any series. */
  words: readonly string[];
  /** One line said with the hits (what the BOJ has, when it is not quite what was asked). */
  note?: string;
}

export const ASKS: readonly Ask[] = [
  {
    pattern:
      /usd\s*\/?\s*jpy|jpy\s*\/?\s*usd|dollar.{0,12}yen|yen.{0,12}dollar|ドル.{0,3}円|ドル円|\byen\b|exchange rate|為替/,
    dbs: ["FM08"],
    words: ["dollar/yen", "ドル・円"],
  },
  {
    pattern: /\beur\s*\/?\s*(jpy|usd)|euro|ユーロ/,
    dbs: ["FM08"],
    words: ["euro", "ユーロ"],
  },
  {
    pattern: /policy (interest )?rate|policy rate|call rate|overnight|政策金利|無担保コール|コールレート/,
    dbs: ["FM01", "IR01"],
    words: ["call rate", "コール", "basic loan rate", "基準貸付利率"],
    note: "The BOJ's policy rate is its target for the uncollateralized overnight call rate",
  },
  {
    pattern: /discount rate|basic loan|基準割引率|基準貸付/,
    dbs: ["IR01"],
    words: [],
  },
  {
    pattern: /\bcpi\b|consumer price|inflation|消費者物価|物価/,
    dbs: ["PR01", "PR02"],
    words: [],
    note: "Japan's consumer price index is published by the Statistics Bureau (e-Stat); the BOJ publishes " +
      "producer prices (CGPI, SPPI)",
  },
  {
    pattern: /tankan|短観|business (sentiment|conditions)|diffusion index/,
    dbs: ["CO"],
    words: [],
  },
  {
    pattern: /money stock|money supply|\bm2\b|\bm3\b|マネーストック/,
    dbs: ["MD02"],
    words: [],
  },
];

/** The questions `query` (folded) asks. */
export function asksOf(query: string): Ask[] {
  return ASKS.filter((a) => a.pattern.test(query));
}

/** Whether `text` holds Japanese script (then the Japanese names are searched). */
export function isJapanese(text: string): boolean {
  return /[\u3040-\u30ff\u3400-\u9fff]/.test(text);
}
