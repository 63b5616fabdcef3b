// Longer than the 500 lines the house keeps to, on purpose: most of it is the manual's tables as data (appendix A's databases, appendix B's
// messages, the parameter list); kept in one file, as they are one source document.
//
// The static discovery catalog: databases (manual appendix A), parameters and limits
// (manual II.3-II.4) and messages (appendix B) of the BOJ API manual of 2026-02-18. Japanese
// names and messages are the manual's; the English labels are this project's own translations.

/** Where the catalog comes from: discovery results carry it, so a model can cite the manual. */
export const SOURCE_DOCUMENT = "api_manual.pdf (時系列統計データ検索サイト API 機能利用マニュアル)";
/** Publication date of the manual the catalog follows. */
export const SOURCE_DATE = "2026-02-18";
/** The manual's address. */
export const SOURCE_URL = "https://www.stat-search.boj.or.jp/info/api_manual.pdf";
/** The usage notice (credit wording, notification, commercial use). */
export const TERMS_URL = "https://www.stat-search.boj.or.jp/info/api_notice.pdf";
/** The credit the BOJ's usage notice asks services built on the API to show. */
export const CREDIT_JA =
  "このサービスは、日本銀行時系列統計データ検索サイトの API 機能を使用しています。サービスの内容は日本銀行によって保証されたものではありません。";
/** The same credit in English (an unofficial rendering). */
export const CREDIT_EN =
  "This service uses the API of the Bank of Japan Time-Series Data Search site. Its contents are not guaranteed by the Bank of Japan.";

/** One database code (appendix A). */
export interface DatabaseEntry {
  code: string;
  category_ja: string;
  category_en: string;
  name_ja: string;
  name_en: string;
}

const CATEGORIES: Record<string, string> = {
  "金利（預金・貸出関連）": "Interest rates on deposits and loans",
  "マーケット関連": "Financial markets",
  "決済関連": "Payment and settlement",
  "預金・マネー・貸出": "Deposits, money and loans",
  "金融機関バランスシート": "Balance sheets of financial institutions",
  "資金循環": "Flow of funds",
  "その他の日本銀行関連": "Other Bank of Japan statistics",
  "短観": "TANKAN",
  "物価": "Prices",
  "財政関連": "Public finance",
  "国際収支・BIS関連": "Balance of payments and BIS-related statistics",
  "その他": "Others",
};

// [code, category (JP), name (JP), name (EN)]
const DB_ROWS: readonly (readonly [string, string, string, string])[] = [
  [
    "IR01",
    "金利（預金・貸出関連）",
    "基準割引率および基準貸付利率（従来「公定歩合」として掲載されていたもの）の推移",
    "Basic discount rate and basic loan rate (formerly the official discount rate), history",
  ],
  [
    "IR02",
    "金利（預金・貸出関連）",
    "預金種類別店頭表示金利の平均年利率等",
    "Average posted interest rates by type of deposit",
  ],
  [
    "IR03",
    "金利（預金・貸出関連）",
    "定期預金の預入期間別平均金利",
    "Average interest rates on time deposits by term",
  ],
  [
    "IR04",
    "金利（預金・貸出関連）",
    "貸出約定平均金利",
    "Average contract interest rates on loans and discounts",
  ],
  [
    "FM01",
    "マーケット関連",
    "無担保コールＯ／Ｎ物レート（毎営業日）",
    "Uncollateralized overnight call rate (every business day)",
  ],
  ["FM02", "マーケット関連", "短期金融市場金利", "Short-term money market rates"],
  ["FM03", "マーケット関連", "短期金融市場残高", "Amounts outstanding in short-term money markets"],
  ["FM04", "マーケット関連", "コール市場残高", "Amounts outstanding in the call money market"],
  [
    "FM05",
    "マーケット関連",
    "公社債発行・償還および現存額",
    "Bonds: issuance, redemption and amounts outstanding",
  ],
  [
    "FM06",
    "マーケット関連",
    "公社債消化状況（利付国債）",
    "Subscription of interest-bearing government bonds",
  ],
  [
    "FM07",
    "マーケット関連",
    "(参考）国債窓口販売額・窓口販売率（2004年1月まで）",
    "(Reference) Over-the-counter sales of government bonds and their ratio (until January 2004)",
  ],
  ["FM08", "マーケット関連", "外国為替市況", "Foreign exchange rates"],
  ["FM09", "マーケット関連", "実効為替レート", "Effective exchange rates"],
  ["PS01", "決済関連", "各種決済", "Payment and settlement statistics"],
  ["PS02", "決済関連", "フェイルの発生状況", "Settlement fails"],
  ["MD01", "預金・マネー・貸出", "マネタリーベース", "Monetary base"],
  ["MD02", "預金・マネー・貸出", "マネーストック", "Money stock"],
  ["MD03", "預金・マネー・貸出", "マネタリーサーベイ", "Monetary survey"],
  [
    "MD04",
    "預金・マネー・貸出",
    "(参考) マネーサプライ (M2+CD) 増減と信用面の対応",
    "(Reference) Changes in money supply (M2+CD) and their credit counterparts",
  ],
  ["MD05", "預金・マネー・貸出", "通貨流通高", "Currency in circulation"],
  [
    "MD06",
    "預金・マネー・貸出",
    "日銀当座預金増減要因と金融調節（実績）",
    "Factors in changes in current account balances at the Bank of Japan and market operations (results)",
  ],
  ["MD07", "預金・マネー・貸出", "準備預金額", "Reserves"],
  [
    "MD08",
    "預金・マネー・貸出",
    "業態別の日銀当座預金残高",
    "Current account balances at the Bank of Japan by type of institution",
  ],
  [
    "MD09",
    "預金・マネー・貸出",
    "マネタリーベースと日本銀行の取引",
    "Monetary base and Bank of Japan transactions",
  ],
  ["MD10", "預金・マネー・貸出", "預金者別預金", "Deposits by depositor"],
  [
    "MD11",
    "預金・マネー・貸出",
    "預金・現金・貸出金",
    "Deposits, vault cash, and loans and bills discounted",
  ],
  [
    "MD12",
    "預金・マネー・貸出",
    "都道府県別預金・現金・貸出金",
    "Deposits, vault cash and loans by prefecture",
  ],
  ["MD13", "預金・マネー・貸出", "貸出・預金動向", "Trends in lending and deposits"],
  [
    "MD14",
    "預金・マネー・貸出",
    "定期預金の残高および新規受入高",
    "Time deposits: amounts outstanding and new deposits",
  ],
  ["LA01", "預金・マネー・貸出", "貸出先別貸出金", "Loans and bills discounted by sector"],
  ["LA02", "預金・マネー・貸出", "日本銀行貸出", "Bank of Japan loans"],
  ["LA03", "預金・マネー・貸出", "その他貸出残高", "Other loans outstanding"],
  [
    "LA04",
    "預金・マネー・貸出",
    "コミットメントライン契約額、利用額",
    "Commitment lines: contracted and used amounts",
  ],
  [
    "LA05",
    "預金・マネー・貸出",
    "主要銀行貸出動向アンケート調査",
    "Senior Loan Officer Opinion Survey on bank lending practices at large banks",
  ],
  ["BS01", "金融機関バランスシート", "日本銀行勘定", "Bank of Japan accounts"],
  [
    "BS02",
    "金融機関バランスシート",
    "民間金融機関の資産・負債",
    "Assets and liabilities of private financial institutions",
  ],
  ["FF", "資金循環", "資金循環", "Flow of funds"],
  ["OB01", "その他の日本銀行関連", "日本銀行の対政府取引", "Bank of Japan transactions with the government"],
  [
    "OB02",
    "その他の日本銀行関連",
    "日本銀行が受入れている担保の残高",
    "Collateral accepted by the Bank of Japan (amounts outstanding)",
  ],
  ["CO", "短観", "短観", "TANKAN (Short-term Economic Survey of Enterprises in Japan)"],
  ["PR01", "物価", "企業物価指数", "Corporate Goods Price Index (CGPI)"],
  ["PR02", "物価", "企業向けサービス価格指数", "Services Producer Price Index (SPPI)"],
  [
    "PR03",
    "物価",
    "製造業部門別投入・産出物価指数",
    "Input-output price indexes of the manufacturing industry by sector",
  ],
  [
    "PR04",
    "物価",
    "＜サテライト指数＞最終需要・中間需要物価指数",
    "(Satellite index) Final demand-intermediate demand price indexes",
  ],
  ["PF01", "財政関連", "財政資金収支", "Treasury funds: receipts and payments"],
  ["PF02", "財政関連", "政府債務", "National government debt"],
  ["BP01", "国際収支・BIS関連", "国際収支統計", "Balance of payments"],
  [
    "BIS",
    "国際収支・BIS関連",
    "BIS 国際資金取引統計および国際与信統計の日本分集計結果",
    "BIS international banking and consolidated banking statistics (Japanese data)",
  ],
  [
    "DER",
    "国際収支・BIS関連",
    "デリバティブ取引に関する定例市場報告",
    "Regular derivatives market statistics in Japan",
  ],
  ["OT", "その他", "その他", "Others"],
];

/** All 50 database codes of appendix A, in the manual's order. */
export const DATABASES: readonly DatabaseEntry[] = DB_ROWS.map(([code, category, nameJa, nameEn]) => ({
  code,
  category_ja: category,
  category_en: CATEGORIES[category] ?? category,
  name_ja: nameJa,
  name_en: nameEn,
}));

/** The database entry for `code`, case-insensitively. */
export function findDatabase(code: string): DatabaseEntry | undefined {
  const upper = code.trim().toUpperCase();
  return DATABASES.find((d) => d.code === upper);
}

/** Output formats in BOJ notation. */
export const FORMAT_CODES = ["JSON", "CSV"] as const;
/** Languages in BOJ notation. */
export const LANGUAGE_CODES = ["JP", "EN"] as const;
/** Output formats as the tools take them (upper case is accepted too). */
export const MCP_FORMAT_CODES = ["json", "csv"] as const;
/** Languages as the tools take them (upper case is accepted too). */
export const MCP_LANGUAGE_CODES = ["jp", "en"] as const;
/** Frequencies of the layer API. */
export const FREQUENCY_CODES = ["CY", "FY", "CH", "FH", "Q", "M", "W", "D"] as const;
/** One frequency code. */
export type Frequency = typeof FREQUENCY_CODES[number];

/** What each frequency means and how its periods are written in STARTDATE/ENDDATE. */
export const FREQUENCIES: readonly { code: Frequency; meaning: string; date_format: string }[] = [
  { code: "CY", meaning: "Calendar year", date_format: "YYYY" },
  { code: "FY", meaning: "Fiscal year (April to March)", date_format: "YYYY" },
  { code: "CH", meaning: "Calendar half-year", date_format: "YYYYHH (HH = 01 or 02)" },
  { code: "FH", meaning: "Fiscal half-year", date_format: "YYYYHH (HH = 01 or 02)" },
  { code: "Q", meaning: "Quarter", date_format: "YYYYQQ (QQ = 01 to 04)" },
  { code: "M", meaning: "Month", date_format: "YYYYMM" },
  { code: "W", meaning: "Week (W0 to W6 series are all requested as W)", date_format: "YYYYMM" },
  { code: "D", meaning: "Day", date_format: "YYYYMM" },
];

/** The endpoint scopes of the parameter catalog. */
export const ENDPOINT_SCOPES = ["all", "get_data_code", "get_data_layer", "get_metadata"] as const;
/** One endpoint scope. */
export type EndpointScope = typeof ENDPOINT_SCOPES[number];

/** The API path of each endpoint scope. */
export const ENDPOINT_NAMES: Record<EndpointScope, string> = {
  all: "all",
  get_data_code: "getDataCode",
  get_data_layer: "getDataLayer",
  get_metadata: "getMetadata",
};

/** How a parameter is used by one endpoint. */
export type Requirement = "required" | "optional" | "unsupported";

/** One row of the parameter matrix (manual II.3). */
export interface ParameterSpec {
  /** BOJ notation. */
  name: string;
  /** The tool argument that sets it. */
  mcp_argument: string;
  description: string;
  allowed_values: string;
  requirements: { code_api: Requirement; layer_api: Requirement; metadata_api: Requirement };
  notes: string[];
}

/** The parameter matrix. */
export const PARAMETERS: readonly ParameterSpec[] = [
  {
    name: "FORMAT",
    mcp_argument: "format",
    description: "Format of the answer",
    allowed_values: "JSON, CSV (default JSON)",
    requirements: { code_api: "optional", layer_api: "optional", metadata_api: "optional" },
    notes: [
      "Errors come back as JSON whatever the format",
      "CSV in Japanese (LANG=JP) is Shift_JIS; CSV in English and all JSON are UTF-8 (the tools decode both)",
    ],
  },
  {
    name: "LANG",
    mcp_argument: "lang",
    description: "Language of names, units, categories and messages",
    allowed_values: "JP, EN (default JP)",
    requirements: { code_api: "optional", layer_api: "optional", metadata_api: "optional" },
    notes: ["Metadata carries the English fields in both languages; JP adds the Japanese ones (_J fields)"],
  },
  {
    name: "DB",
    mcp_argument: "db",
    description: "Database code",
    allowed_values: "A code from appendix A, e.g. FM08 (see boj_list_databases)",
    requirements: { code_api: "required", layer_api: "required", metadata_api: "required" },
    notes: [],
  },
  {
    name: "CODE",
    mcp_argument: "codes",
    description: "Series codes",
    allowed_values: "Series codes without the database prefix, comma-separated, all of one frequency",
    requirements: { code_api: "required", layer_api: "unsupported", metadata_api: "unsupported" },
    notes: [
      "At most 1,250 codes per request (M181007E)",
      "A code with its database prefix, such as IR01'MADR1Z@D, is refused (M181001E): pass MADR1Z@D with db IR01",
      "Codes of different frequencies in one request are refused (M181014E)",
    ],
  },
  {
    name: "LAYER",
    mcp_argument: "layers",
    description: "Position in the database's hierarchy",
    allowed_values: "layer1[,layer2[,...,layer5]], each a positive integer or * for every item of that level",
    requirements: { code_api: "unsupported", layer_api: "required", metadata_api: "unsupported" },
    notes: [
      "Layer 1 is required; at most 5 levels",
      "The query may match at most 1,250 series (counted before the frequency filter); beyond that the API answers with an error and no data",
      "The layer numbers of each series are in boj_get_metadata (layer1..layer5)",
    ],
  },
  {
    name: "FREQUENCY",
    mcp_argument: "frequency",
    description: "Frequency of the series to return",
    allowed_values: "CY, FY, CH, FH, Q, M, W, D",
    requirements: { code_api: "unsupported", layer_api: "required", metadata_api: "unsupported" },
    notes: ["Weekly series (W0 to W6) are all requested as W"],
  },
  {
    name: "STARTDATE",
    mcp_argument: "start_date",
    description: "First period",
    allowed_values: "CY/FY: YYYY; CH/FH: YYYYHH (01-02); Q: YYYYQQ (01-04); M/W/D: YYYYMM",
    requirements: { code_api: "optional", layer_api: "optional", metadata_api: "unsupported" },
    notes: ["Omitted: from the first period available", "Years 1850 to 2050 (M181010E)"],
  },
  {
    name: "ENDDATE",
    mcp_argument: "end_date",
    description: "Last period",
    allowed_values: "Same format as STARTDATE",
    requirements: { code_api: "optional", layer_api: "optional", metadata_api: "unsupported" },
    notes: ["Omitted: up to the latest period available", "Must not be before STARTDATE (M181011E)"],
  },
  {
    name: "STARTPOSITION",
    mcp_argument: "start_position",
    description: "Where to continue a result the API cut",
    allowed_values: "An integer of 1 or more",
    requirements: { code_api: "optional", layer_api: "optional", metadata_api: "unsupported" },
    notes: [
      "Send the same request again with STARTPOSITION set to the previous answer's NEXTPOSITION",
      "Code API: the position in the list of codes given; layer API: the rank among all series of the database sorted by layers 1 to 5",
    ],
  },
];

/** One request limit (manual II.4). */
export interface RequestLimit {
  api_scope: string;
  target: string;
  max_value: number;
  overflow_behavior: string;
}

/** The API's request limits. */
export const LIMITS: readonly RequestLimit[] = [
  {
    api_scope: "getDataLayer",
    target: "Series matched by the layer query, counted before the frequency filter",
    max_value: 1250,
    overflow_behavior: "Error; no data is returned. Narrow the layers",
  },
  {
    api_scope: "getDataCode",
    target: "Series codes in one request",
    max_value: 1250,
    overflow_behavior: "Error M181007E",
  },
  {
    api_scope: "getDataCode,getDataLayer",
    target: "Series returned by one request",
    max_value: 250,
    overflow_behavior: "Output up to the limit plus NEXTPOSITION; send it as STARTPOSITION to continue",
  },
  {
    api_scope: "getDataCode,getDataLayer",
    target: "Data points returned by one request (series × periods, missing values counted)",
    max_value: 60000,
    overflow_behavior: "Output up to the limit plus NEXTPOSITION; send it as STARTPOSITION to continue",
  },
];

/** How layers are given (manual II.3(3)). */
export const LAYER_RULES: readonly string[] = [
  "Layer 1 is required",
  "Layers 2 to 5 are optional",
  "Several levels are separated by commas, e.g. 1,1,1",
  "* selects every item of its level",
];

/** Rules that hold for every parameter. */
export const GENERAL_NOTES: readonly string[] = [
  "These characters and any full-width character are refused in values: < > ” ! | \\ ; '",
  "Parameter names and values are case-insensitive; the endpoint path is case-sensitive",
  "Parameters may come in any order",
  "Avoid high-frequency access: the BOJ may cut connections",
];

/** One row of the message catalog (appendix B). */
export interface MessageSpec {
  status: number;
  message_id: string;
  /** The manual's text (Japanese, except M181001E and M181002E). */
  message: string;
  /** This project's English rendering; "observed" ones are the API's own English text. */
  message_en: string;
  note: string;
  /** What to do about it. */
  hint: string;
}

/** The message catalog. */
export const MESSAGES: readonly MessageSpec[] = [
  {
    status: 200,
    message_id: "M181000I",
    message: "正常に終了しました。",
    message_en: "Successfully completed",
    note: "Also when some values are missing",
    hint: "Nothing to do",
  },
  {
    status: 200,
    message_id: "M181030I",
    message: "正常に終了しましたが、該当データはありませんでした。",
    message_en: "Completed, but no matching data was found",
    note: "Every requested period is outside the series' range, or every value is missing",
    hint: "Check the series' range with boj_get_metadata (start/end of the time series) and widen the dates",
  },
  {
    status: 400,
    message_id: "M181001E",
    message: "Invalid input parameters",
    message_en: "Invalid input parameters",
    note:
      "Forbidden characters (< > ” ! | \\ ; ') or full-width characters, or a series code with its database prefix such as IR01'MADR1Z@D",
    hint: "Remove forbidden and full-width characters, and drop any database prefix from series codes",
  },
  {
    status: 400,
    message_id: "M181002E",
    message: "Invalid language setting",
    message_en: "Invalid language setting",
    note: "",
    hint: 'Use lang "jp" or "en"',
  },
  {
    status: 400,
    message_id: "M181003E",
    message: "結果ファイル形式が正しくありません。",
    message_en: "Invalid result format",
    note: "",
    hint: 'Use format "json" or "csv"',
  },
  {
    status: 400,
    message_id: "M181004E",
    message: "DBが指定されていません。",
    message_en: "No database given",
    note: "",
    hint: "Give db, a code from boj_list_databases",
  },
  {
    status: 400,
    message_id: "M181005E",
    message: "DB名が正しくありません。",
    message_en: "Invalid database name",
    note: "",
    hint: "Use a database code from boj_list_databases, e.g. FM08",
  },
  {
    status: 400,
    message_id: "M181006E",
    message: "系列コードが指定されていません。",
    message_en: "No series code given",
    note: "",
    hint: "Give at least one series code; boj_get_metadata lists them",
  },
  {
    status: 400,
    message_id: "M181007E",
    message: "系列コードの数が1250を超えています。",
    message_en: "More than 1,250 series codes",
    note: "",
    hint: "Split the codes into requests of at most 1,250",
  },
  {
    status: 400,
    message_id: "M181008E",
    message: "指定した開始期が正しくありません。",
    message_en: "Invalid start period",
    note: "",
    hint: "Write start_date as YYYY, YYYYHH, YYYYQQ or YYYYMM to match the frequency",
  },
  {
    status: 400,
    message_id: "M181009E",
    message: "指定した終了期が正しくありません。",
    message_en: "Invalid end period",
    note: "",
    hint: "Write end_date as YYYY, YYYYHH, YYYYQQ or YYYYMM to match the frequency",
  },
  {
    status: 400,
    message_id: "M181010E",
    message: "時期は1850年から2050年までを数値で指定してください。",
    message_en: "Periods must be numbers between 1850 and 2050",
    note: "",
    hint: "Use years from 1850 to 2050",
  },
  {
    status: 400,
    message_id: "M181011E",
    message: "開始期と終了期の順序を正しく指定してください。",
    message_en: "Start and end periods are in the wrong order",
    note: "The start period must not be after the end period",
    hint: "Make start_date earlier than or equal to end_date",
  },
  {
    status: 400,
    message_id: "M181012E",
    message: "検索開始位置が正しくありません。",
    message_en: "Invalid start position",
    note: "An integer of 1 or more; see manual II.4(2)",
    hint: "Use start_position 1 or more, normally the next_position of the previous result",
  },
  {
    status: 400,
    message_id: "M181013E",
    message: "指定した系列コードは存在しません。:*番目のコード",
    message_en:
      "One of the series codes given does not exist; the message ends with its position in the code list",
    note:
      'The message ends with ":N番目のコード" ("the Nth code"), N being the position of the code in the request',
    hint: "Check that code with boj_get_metadata for this database; codes carry no database prefix",
  },
  {
    status: 400,
    message_id: "M181014E",
    message: "指定した系列コードの期種が一致しません。:*番目のコード",
    message_en:
      "The series codes given are not all of one frequency; the message ends with the position of a code that differs",
    note:
      'The message ends with ":N番目のコード" ("the Nth code"), N being the position of the code in the request',
    hint: "Request codes of one frequency per call (boj_get_metadata shows each series' frequency)",
  },
  {
    status: 400,
    message_id: "M181015E",
    message: "指定した開始期の設定形式が期種と一致しません。",
    message_en: "The start period's format does not match the frequency",
    note: "",
    hint: "Annual: YYYY; half-yearly: YYYYHH; quarterly: YYYYQQ; monthly, weekly and daily: YYYYMM",
  },
  {
    status: 400,
    message_id: "M181016E",
    message: "指定した終了期の設定形式が期種と一致しません。",
    message_en: "The end period's format does not match the frequency",
    note: "",
    hint: "Annual: YYYY; half-yearly: YYYYHH; quarterly: YYYYQQ; monthly, weekly and daily: YYYYMM",
  },
  {
    status: 400,
    message_id: "M181017E",
    message: "期種が指定されていません。",
    message_en: "No frequency given",
    note: "",
    hint: "Give frequency: CY, FY, CH, FH, Q, M, W or D",
  },
  {
    status: 400,
    message_id: "M181018E",
    message: "期種が正しくありません。",
    message_en: "Invalid frequency",
    note: "",
    hint: "Use frequency CY, FY, CH, FH, Q, M, W or D",
  },
  {
    status: 400,
    message_id: "M181019E",
    message: "階層情報が指定されていません。",
    message_en: "No layer given",
    note: "Layer 1 is required, layers 2 to 5 optional, 6 or more refused",
    hint: 'Give 1 to 5 layers, e.g. ["1"] or ["1", "*"]',
  },
  {
    status: 400,
    message_id: "M181020E",
    message: "階層情報設定が正しくありません。",
    message_en: "Invalid layer setting",
    note: "See manual II.3(3)",
    hint: "Each layer is a positive integer or *; take the numbers from boj_get_metadata (layer1..layer5)",
  },
  {
    status: 500,
    message_id: "M181090S",
    message: "予期しないエラーが発生しました。時間をおいてからやり直してください。",
    message_en: "An unexpected error occurred; try again later",
    note: "",
    hint: "Wait a little, then call again",
  },
  {
    status: 503,
    message_id: "M181091S",
    message: "データベースにアクセス中にエラーになりました。時間をおいてからやり直してください。",
    message_en: "An error occurred while accessing the database; try again later",
    note: "",
    hint: "Wait a little, then call again",
  },
];

/** The catalog row of `messageId`, if known. */
export function findMessage(messageId: string): MessageSpec | undefined {
  return MESSAGES.find((m) => m.message_id === messageId.trim().toUpperCase());
}

/** Distinct statuses of the message catalog, ascending. */
export function messageStatuses(): number[] {
  return [...new Set(MESSAGES.map((m) => m.status))].sort((a, b) => a - b);
}
