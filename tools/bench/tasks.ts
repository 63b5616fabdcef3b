// The task suite: realistic questions across the eight sources, asked of the default
// surface (three tools) over stdio, against recorded bodies (tests/fakes/recorded.ts). A scripted
// agent types the question into opendata_search and then follows only the next calls the answers
// name (structuredContent.next_calls, as a model reads them from the text), preferring one whose
// `for` says what the question wants; it never writes a call of its own. It stops when the answer
// holds what the question asked for. Reported per task: calls, and o200k tokens of the answers
// (text only, and text plus structured content, as clients that forward both pay).
//
//   deno run -A tools/bench/tasks.ts          prints the table
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { startRecordedUpstreams } from "../../tests/fakes/recorded.ts";
import { startStdio } from "../../tests/harness/spawn.ts";
import type { StdioSession } from "../../tests/harness/spawn.ts";
import type { Received, Route } from "../../tests/fakes/upstream.ts";

/** One question. */
export interface Task {
  id: string;
  source: string;
  question: string;
  /** What the agent types into opendata_search. */
  query: string;
  /** The sources it names, when the question names one. */
  sources?: string[];
  /**
   * Which next call to prefer, by its `for` and tool (as a model picks the hit that fits the
   * question); else the first one of the first hit.
   */
  prefer?: RegExp;
  /** The answer's text holds what was asked. */
  answer: RegExp;
  /**
   * The agent's own first call instead of the search, as a model writes it (a provider tool is
   * reached through opendata_call): a list to page or open, a typo, a wrong argument name.
   */
  start?: { tool: string; arguments: Record<string, unknown> };
  /**
   * The upstream is down for this question: answered by an error whose text says what to do
   * (the retry advice), not by data.
   */
  failure?: true;
}

export const TASKS: readonly Task[] = [
  // FRED (the fake answers every series search with GNPCA, as recorded from the API docs).
  {
    id: "fred-latest",
    source: "fred",
    question: "US real GNP, latest value",
    query: "real gross national product",
    prefer: /latest/,
    answer: /2012-01-01/,
  },
  {
    id: "fred-id",
    source: "fred",
    question: "Latest GNPCA observation",
    query: "GNPCA",
    sources: ["fred"],
    answer: /2012-01-01/,
  },
  {
    id: "fred-history-file",
    source: "fred",
    question: "All of real GNP since 1929, as a file",
    query: "real GNP annual",
    sources: ["fred"],
    prefer: /whole history/,
    answer: /84 rows/,
  },
  {
    id: "fred-history-read",
    source: "fred",
    question: "Real GNP in 1929 (read from the whole history)",
    query: "real gross national product history",
    sources: ["fred"],
    prefer: /whole history|read the file/,
    answer: /1929-01-01,1065\.9/,
  },
  // BOJ (metadata recorded from the API's getMetadata; observation values of the fake are illustrative).
  {
    id: "boj-usdjpy",
    source: "boj",
    question: "USD/JPY exchange rate, latest",
    query: "USD/JPY",
    answer: /FXERD01[\s\S]*153\.64/,
  },
  {
    id: "boj-dollar-yen",
    source: "boj",
    question: "dollar yen exchange rate",
    query: "dollar yen exchange rate",
    sources: ["boj"],
    answer: /153\.64/,
  },
  {
    // No alias says "spot": the database FM08 is named by "foreign exchange", its series by "spot".
    id: "boj-fx-spot",
    source: "boj",
    question: "Foreign exchange spot rate in Tokyo",
    query: "foreign exchange spot Tokyo",
    sources: ["boj"],
    answer: /FXERD01[\s\S]*153\.64/,
  },
  {
    id: "boj-yen",
    source: "boj",
    question: "What is the yen at?",
    query: "yen",
    sources: ["boj"],
    answer: /153\.64/,
  },
  { id: "boj-ja", source: "boj", question: "ドル円の為替レート", query: "ドル円 為替", answer: /153\.64/ },
  {
    id: "boj-policy",
    source: "boj",
    question: "Bank of Japan policy rate",
    query: "policy rate",
    sources: ["boj"],
    answer: /STRDCLUCON[\s\S]*0\.49/,
  },
  {
    id: "boj-call",
    source: "boj",
    question: "Uncollateralized overnight call rate",
    query: "uncollateralized overnight call rate",
    sources: ["boj"],
    answer: /0\.49/,
  },
  {
    id: "boj-basic-loan",
    source: "boj",
    question: "Basic loan rate (discount rate)",
    query: "basic loan rate",
    sources: ["boj"],
    answer: /MADR1Z@D[\s\S]*152\.91/,
  },
  {
    id: "boj-cpi",
    source: "boj",
    question: "Japan CPI",
    query: "CPI Japan",
    sources: ["boj"],
    answer: /Statistics Bureau/,
  },
  {
    id: "boj-tankan",
    source: "boj",
    question: "Tankan survey",
    query: "Tankan",
    sources: ["boj"],
    answer: /TANKAN/,
  },
  // World Bank (recorded WDS answer for "post office").
  {
    id: "wb-details",
    source: "worldbank",
    question: "The World Bank paper on post offices and financial inclusion",
    query: "post office financial inclusion",
    sources: ["worldbank"],
    answer: /## Abstract/,
  },
  {
    id: "wb-filtered",
    source: "worldbank",
    question: "Newest working papers like the post-office one",
    query: "post office",
    sources: ["worldbank"],
    prefer: /newest/,
    answer: /sorted by docdt desc/,
  },
  {
    id: "wb-postal",
    source: "worldbank",
    question: "Postal financial services",
    query: "postal",
    answer: /## Abstract/,
  },
  {
    id: "wb-empty",
    source: "worldbank",
    question: "Documents on a topic with no hits, widened",
    query: "post office zzyzx",
    sources: ["worldbank"],
    answer: /Found \d+ documents/,
  },
  // Wikipedia (recorded en search for "meaning", geosearch around Cape Cod).
  {
    id: "wiki-summary",
    source: "wikipedia",
    question: "What does 'meaning' mean (Wikipedia)?",
    query: "meaning",
    sources: ["wikipedia"],
    answer: /Christiania|Oslo/,
  },
  {
    id: "wiki-geo",
    source: "wikipedia",
    question: "Wikipedia articles near 41.67N 70.30W",
    query: "41.67N 70.30W",
    sources: ["wikipedia"],
    answer: /\*\*Cape Cod\*\*: \d+ m/,
  },
  {
    id: "wiki-geo-plain",
    source: "wikipedia",
    question: "Articles near 41.6766, -70.2949",
    query: "41.6766, -70.2949",
    sources: ["wikipedia"],
    answer: /Cape|Barnstable|Hyannis/,
  },
  // Store norske leksikon.
  {
    id: "snl-article",
    source: "snl",
    question: "Store norske leksikon on programming languages",
    query: "programmeringsspråk",
    sources: ["snl"],
    answer: /Eksempler på fortolkede/,
  },
  {
    id: "snl-search",
    source: "snl",
    question: "What is dansband?",
    query: "dansband",
    sources: ["snl"],
    answer: /dansband/i,
  },
  {
    id: "snl-first",
    source: "snl",
    question: "Programmering, kort",
    query: "programmering",
    prefer: /snl-article/,
    answer: /Eksempler på fortolkede/,
  },
  // Riksantikvaren OGC API.
  {
    id: "ogc-name",
    source: "riksantikvaren_ogc",
    question: "Heritage site Mariakirken",
    query: "Mariakirken",
    sources: ["riksantikvaren_ogc"],
    answer: /Kulturminnesøk: https/,
  },
  {
    id: "ogc-coords",
    source: "riksantikvaren_ogc",
    question: "Heritage sites near 59.91N 10.75E",
    query: "59.91N 10.75E",
    prefer: /sites nearby/,
    answer: /Bygdeborg/,
  },
  {
    id: "ogc-coords-plain",
    source: "riksantikvaren_ogc",
    question: "Protected sites around 59.9110, 10.7634",
    query: "59.9110, 10.7634",
    sources: ["riksantikvaren_ogc"],
    answer: /Bygdeborg/,
  },
  {
    id: "ogc-name-city",
    source: "riksantikvaren_ogc",
    question: "Mariakirken in the register",
    query: "Mariakirken",
    prefer: /riksantikvaren-feature/,
    answer: /Kulturminnesøk: https/,
  },
  // Riksantikvaren ArcGIS map services.
  {
    id: "arcgis-identify",
    source: "riksantikvaren_arcgis",
    question: "What is registered at 59.91N 10.75E (map layers)?",
    query: "59.91N 10.75E",
    sources: ["riksantikvaren_arcgis"],
    answer: /Testgården/,
  },
  {
    id: "arcgis-layers",
    source: "riksantikvaren_arcgis",
    question: "Which map layers does Riksantikvaren's ArcGIS have?",
    query: "arcgis kartlag",
    prefer: /its layers/,
    answer: /Sikringssoner/,
  },
  {
    id: "arcgis-listed",
    source: "riksantikvaren_arcgis",
    question: "Listed buildings on the map (fredete bygninger)",
    query: "fredete bygninger kart",
    sources: ["riksantikvaren_arcgis"],
    answer: /OBJECTID|Lokalitet \d|features? \d/,
  },
  // Second hops: from a list to a record and to the next page, as the agent's own first call.
  {
    id: "hop-wiki-list-record",
    source: "wikipedia",
    question: "Open the first Wikipedia hit for 'meaning'",
    query: "",
    start: { tool: "wikipedia-search", arguments: { query: "meaning", limit: 3 } },
    prefer: /summary of/,
    answer: /Christiania|Oslo/,
  },
  {
    id: "hop-wiki-next-page",
    source: "wikipedia",
    question: "More Wikipedia hits for 'meaning'",
    query: "",
    start: { tool: "wikipedia-search", arguments: { query: "meaning", limit: 2 } },
    prefer: /next page/,
    answer: /showing 3–4/,
  },
  {
    id: "hop-wb-list-record",
    source: "worldbank",
    question: "Details of the first World Bank document on post offices",
    query: "",
    start: { tool: "worldbank_search_documents", arguments: { query: "post office", limit: 2 } },
    prefer: /details of/,
    answer: /## Abstract/,
  },
  {
    id: "hop-fred-list-record",
    source: "fred",
    question: "Latest values of the first FRED series matching 'gnp'",
    query: "",
    start: { tool: "fred_series", arguments: { operation: "search", search_text: "gnp", limit: 3 } },
    prefer: /latest values of/,
    answer: /2012-01-01/,
  },
  {
    id: "hop-fred-next-page",
    source: "fred",
    question: "Real GNP, the five years after the first five",
    query: "",
    start: {
      tool: "fred_series",
      arguments: { operation: "get_observations", series_id: "GNPCA", limit: 5 },
    },
    prefer: /next page/,
    answer: /1934-01-01 \| 866\.7/,
  },
  {
    id: "hop-snl-list-record",
    source: "snl",
    question: "Read the first SNL article on programming",
    query: "",
    start: { tool: "snl-search", arguments: { query: "programmering", limit: 3 } },
    prefer: /article/,
    answer: /Eksempler på fortolkede/,
  },
  {
    id: "hop-wiki-geo-record",
    source: "wikipedia",
    question: "The nearest Wikipedia article to 41.68N 70.19W, summarised",
    query: "",
    start: { tool: "wikipedia-geosearch", arguments: { lat: 41.68, lon: -70.19 } },
    prefer: /summary of/,
    answer: /Christiania|Oslo/,
  },
  // Empty answers: the call that widens them.
  {
    id: "empty-wiki-geo",
    source: "wikipedia",
    question: "Wikipedia articles near 1N 1E (none within a kilometre)",
    query: "",
    start: { tool: "wikipedia-geosearch", arguments: { lat: 1, lon: 1 } },
    answer: /\*\*Cape Cod\*\*/,
  },
  {
    id: "empty-wiki-summary",
    source: "wikipedia",
    question: "Wikipedia's summary of a title that does not exist",
    query: "",
    start: { tool: "wikipedia-summary", arguments: { title: "Finnes ikke" } },
    answer: /\*\*Meaning\*\*/,
  },
  {
    id: "empty-snl",
    source: "snl",
    question: "SNL on two words it has no article for, widened to the first word",
    query: "",
    start: { tool: "snl-search", arguments: { query: "dansband zzqq" } },
    prefer: /first word/,
    answer: /dansebandeksempel/,
  },
  {
    id: "empty-boj-window",
    source: "boj",
    question: "USD/JPY in a window with no values",
    query: "",
    start: { tool: "boj_get_data_code", arguments: { db: "FM08", codes: ["FXERD01"], start_date: "203001" } },
    answer: /153\.64/,
  },
  // Typos and wrong argument names: the corrected call.
  {
    id: "typo-tool",
    source: "wikipedia",
    question: "A summary through a misspelt tool name",
    query: "",
    start: { tool: "wikipedia_summry", arguments: { title: "Christiania" } },
    answer: /Christiania|Oslo/,
  },
  {
    id: "typo-argument",
    source: "worldbank",
    question: "World Bank documents with a misspelt filter name",
    query: "",
    start: { tool: "worldbank_search_documents", arguments: { query: "post office", countrys: ["World"] } },
    answer: /Found \d+ documents/,
  },
  {
    id: "wrong-argument-name",
    source: "fred",
    question: "Real GNP from 2000, with start_date for observation_start",
    query: "",
    start: {
      tool: "fred_series",
      arguments: { operation: "get_observations", series_id: "GNPCA", start_date: "2000-01-01", limit: 5 },
    },
    answer: /"start_date" read as "observation_start"/,
  },
  {
    id: "wrong-date-format",
    source: "boj",
    question: "USD/JPY since 2024-01-01 (a date the BOJ API does not take)",
    query: "",
    start: {
      tool: "boj_get_data_code",
      arguments: { db: "FM08", codes: ["FXERD01"], start_date: "2024-01-01" },
    },
    answer: /153\.64/,
  },
  // Failed upstreams: a clear error with the retry advice.
  {
    id: "down-worldbank",
    source: "worldbank",
    question: "World Bank documents while its API is down",
    query: "",
    start: { tool: "worldbank_search_documents", arguments: { query: "outage" } },
    failure: true,
    answer: /\nNext:[\s\S]*retry/,
  },
  {
    id: "down-search",
    source: "worldbank",
    question: "Search while the World Bank's API is down: the others answer, the failure is named",
    query: "outage",
    sources: ["worldbank", "fred"],
    answer: /failed: worldbank[\s\S]*retry failed sources/,
  },
  // GeoNorge.
  {
    id: "geonorge-datasets",
    source: "geonorge",
    question: "Riksantikvaren datasets on GeoNorge",
    query: "kulturminner",
    sources: ["geonorge"],
    answer: /\| title \| type \| date \| distribution/,
  },
  {
    id: "geonorge-listed",
    source: "geonorge",
    question: "Dataset of listed buildings",
    query: "fredete bygninger",
    sources: ["geonorge"],
    answer: /\| title \| type \| date \| distribution/,
  },
];

/** What one task cost. */
export interface TaskResult {
  task: Task;
  calls: number;
  /** o200k tokens of the answers' text blocks. */
  textTokens: number;
  /** ... plus their structuredContent, serialized. */
  bothTokens: number;
  answered: boolean;
  /** Why it stopped without an answer: no next call named (a dead end), or too many calls. */
  deadEnd?: string;
  trail: string[];
  /** The answers' texts, in order (for debugging a task). */
  texts: string[];
  /** The answers' structuredContent, in order (undefined where an answer has none). */
  structured: (Record<string, unknown> | undefined)[];
  /** With `checkHints`: the named calls that failed when called as given. */
  failedHints?: string[];
  /** Each answer's kind and its text's o200k tokens, in order. */
  answers: { kind: AnswerKind; tokens: number }[];
}

/** What an answer is, for its token budget. */
export type AnswerKind = "search" | "list" | "record" | "data" | "file" | "read" | "error";

/**
 * The most o200k tokens of text one answer of each kind may cost (tests/mcp/task_suite_test.ts
 * holds the suite to them; docs/BENCHMARKS.md shows what was measured beside them).
 */
export const ANSWER_BUDGETS: Readonly<Record<AnswerKind, number>> = {
  search: 1_000,
  list: 1_400,
  record: 1_400,
  data: 1_300,
  file: 800,
  read: 1_600,
  error: 300,
};

/** Tools whose answer is one record. */
const RECORD_TOOLS = new Set([
  "wikipedia-summary",
  "wikipedia-content",
  "worldbank_get_document_details",
  "snl-article",
  "riksantikvaren-feature",
]);

/** Tools whose answer is observations of series. */
const DATA_TOOLS = new Set(["fred_series", "boj_get_data_code", "boj_get_data_layer"]);

/** The kind of one answer, by the tool that gave it and what it holds. */
function answerKind(call: Call, r: Answer): AnswerKind {
  if (r.isError) return "error";
  const tool = call.tool === "opendata_call" ? String(call.arguments["tool"]) : call.tool;
  if (tool === "opendata_search") return "search";
  if (tool === "opendata_read") return "read";
  if ((r.content as { type: string }[] | undefined)?.some((b) => b.type === "resource_link")) return "file";
  if (RECORD_TOOLS.has(tool)) return "record";
  const args = call.tool === "opendata_call"
    ? JSON.parse(String(call.arguments["arguments"] ?? "{}"))
    : call.arguments;
  if (DATA_TOOLS.has(tool) && !/search|list|get$/.test(String(args["operation"] ?? "get_observations"))) {
    return "data";
  }
  return "list";
}

/** Per kind of answer: how many, the median and the most tokens, and the budget. */
export function answerBudgets(results: readonly TaskResult[]): string {
  const rows: string[] = [
    "| Answer kind | Answers | Median tokens | Most tokens | Budget |",
    "| --- | --- | --- | --- | --- |",
  ];
  for (const kind of Object.keys(ANSWER_BUDGETS) as AnswerKind[]) {
    const tokens = results.flatMap((r) => r.answers.filter((a) => a.kind === kind).map((a) => a.tokens));
    if (tokens.length === 0) continue;
    rows.push(
      `| ${kind} | ${tokens.length} | ${median(tokens)} | ${Math.max(...tokens)} | ${ANSWER_BUDGETS[kind]} |`,
    );
  }
  return rows.join("\n");
}

type Call = { tool: string; arguments: Record<string, unknown>; for?: string };
type Answer = { content?: unknown; structuredContent?: Record<string, unknown>; isError?: boolean };

/** The next calls an answer names, in the order a reader meets them. */
export function namedCalls(structured: Record<string, unknown> | undefined): Call[] {
  if (!structured) return [];
  const calls: Call[] = [];
  const sources = structured["sources"] as
    | { hits?: { next_calls?: Call[] }[]; next_calls?: Call[]; more?: Call }[]
    | undefined;
  for (const s of sources ?? []) for (const h of s.hits ?? []) calls.push(...(h.next_calls ?? []));
  for (const s of sources ?? []) calls.push(...(s.next_calls ?? []), ...(s.more ? [s.more] : []));
  calls.push(...((structured["next_calls"] as Call[] | undefined) ?? []));
  return calls;
}

/**
 * The next calls an answer's text names, in the order a reader meets them: the lines the server
 * writes with `callLine` (after "→ " under a hit or a source, and under "Next:"), `for: tool {json}`
 * or `for: opendata_call <tool> {json}`. For servers with structured content off (text only).
 */
export function textCalls(text: string): Call[] {
  const calls: Call[] = [];
  for (const raw of text.split("\n")) {
    const arrow = raw.indexOf("→ ");
    const line = arrow >= 0 ? raw.slice(arrow + 2) : raw.replace(/^(Next: |- )/, "");
    if (arrow < 0 && line === raw) continue;
    const m = line.match(/^(?:(.+?): )?(opendata_call ([\w-]+)|[\w-]+) (\{.*\})$/);
    if (!m) continue;
    let args: Record<string, unknown>;
    try {
      args = JSON.parse(m[4]!);
    } catch {
      continue;
    }
    const label = m[1] ? { for: m[1] } : {};
    calls.push(
      m[3]
        ? { tool: "opendata_call", arguments: { tool: m[3], arguments: JSON.stringify(args) }, ...label }
        : { tool: m[2]!, arguments: args, ...label },
    );
  }
  return calls;
}

function textOf(r: Answer): string {
  return ((r.content ?? []) as { type: string; text?: string }[]).filter((c) => c.type === "text")
    .map((c) => c.text ?? "").join("\n");
}

/** Runs one task on a session: search, then the named next calls, at most `maxCalls`. */
export async function runTask(s: StdioSession, task: Task, maxCalls = 5): Promise<TaskResult> {
  let call: Call = task.start
    ? task.start.tool.startsWith("opendata_") ? task.start : {
      tool: "opendata_call",
      arguments: { tool: task.start.tool, arguments: JSON.stringify(task.start.arguments) },
    }
    : {
      tool: "opendata_search",
      arguments: { query: task.query, ...(task.sources ? { sources: task.sources } : {}) },
    };
  const result: TaskResult = {
    task,
    calls: 0,
    textTokens: 0,
    bothTokens: 0,
    answered: false,
    trail: [],
    texts: [],
    structured: [],
    answers: [],
  };
  const followed = new Set<string>();
  while (result.calls < maxCalls) {
    const r = await s.client.callTool({ name: call.tool, arguments: call.arguments }) as Answer;
    result.calls++;
    const text = textOf(r);
    result.texts.push(text);
    result.structured.push(r.structuredContent);
    const tokens = encode(text).length;
    result.textTokens += tokens;
    result.bothTokens += tokens +
      (r.structuredContent ? encode(JSON.stringify(r.structuredContent)).length : 0);
    result.trail.push(`${call.tool}${call.tool === "opendata_call" ? `(${call.arguments["tool"]})` : ""}`);
    result.answers.push({ kind: answerKind(call, r), tokens });
    if ((task.failure ? r.isError === true : !r.isError) && task.answer.test(text)) {
      result.answered = true;
      return result;
    }
    followed.add(JSON.stringify(call));
    const named = (r.structuredContent ? namedCalls(r.structuredContent) : textCalls(text))
      .filter((c) => !followed.has(JSON.stringify(c)));
    const label = (c: Call) => `${c.for ?? ""} ${c.tool} ${String(c.arguments["tool"] ?? "")}`;
    const next = (task.prefer ? named.find((c) => task.prefer!.test(label(c))) : undefined) ?? named[0];
    if (!next) {
      result.deadEnd = r.isError ? `error without a next call: ${text.slice(0, 160)}` : "no next call named";
      return result;
    }
    call = next;
  }
  result.deadEnd = `not answered within ${maxCalls} calls`;
  return result;
}

/**
 * Runs every task against one server with all eight providers on recorded bodies; with
 * `structured: false`, the server runs with structured content off and the agent reads the next
 * calls from the text. `bundle`: the entry of a built start bundle to run instead of the sources.
 */
export async function runSuite(
  tasks: readonly Task[] = TASKS,
  options: { structured?: boolean; bundle?: string; checkHints?: boolean } = {},
): Promise<TaskResult[]> {
  await using upstreams = startRecordedUpstreams();
  suiteRoutes(upstreams);
  await using s = await startStdio({
    args: [
      "--providers",
      "worldbank,boj,fred,wikipedia,snl,riksantikvaren_ogc,riksantikvaren_arcgis,geonorge",
    ],
    env: {
      OPENDATA_MCP_TOOLSETS: "",
      ...(options.structured === false ? { MCP_STRUCTURED_CONTENT: "off" } : {}),
    },
    configYaml: upstreams.configYaml,
    ...(options.bundle !== undefined ? { bundle: options.bundle } : {}),
  });
  const results: TaskResult[] = [];
  for (const task of tasks) results.push(await runTask(s, task));
  if (options.checkHints) {
    for (const r of results) r.failedHints = await failedHints(s, r);
  }
  return results;
}

/**
 * Every call the task's answers named, called once as given: those that answer with an error
 * (a hint that fails). A retry named by a failure is left out: the upstream is still down.
 */
async function failedHints(s: StdioSession, r: TaskResult): Promise<string[]> {
  const failed: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < r.texts.length; i++) {
    const structured = r.structured[i];
    const calls = structured ? namedCalls(structured) : textCalls(r.texts[i]!);
    for (const c of calls) {
      const key = JSON.stringify([c.tool, c.arguments]);
      if (seen.has(key) || /retry/.test(c.for ?? "")) continue;
      seen.add(key);
      const answer = await s.client.callTool({ name: c.tool, arguments: c.arguments }) as Answer;
      if (answer.isError) {
        failed.push(
          `${c.for ?? ""}: ${c.tool} ${JSON.stringify(c.arguments)}: ${textOf(answer).slice(0, 120)}`,
        );
      }
    }
  }
  return failed;
}

/**
 * The recorded upstreams plus what the suite's harder questions need: a World Bank outage, a
 * place with no article within a kilometre, a title that does not exist (and its search).
 */
function suiteRoutes(upstreams: { main: { route(r: Route): unknown } }): void {
  const p = (r: Received, name: string) => r.url.searchParams.get(name);
  upstreams.main.route({
    path: "/api/v1/search",
    match: (r) => p(r, "query") === "dansband zzqq",
    reply: { json: [] },
  });
  upstreams.main.route({
    path: "/api/v1/getDataCode",
    match: (r) => p(r, "startDate") === "203001",
    reply: {
      json: {
        STATUS: 200,
        MESSAGEID: "M181000I",
        MESSAGE: "Successfully completed",
        DATE: "2026-02-21T23:41:54.410+09:00",
        PARAMETER: {
          FORMAT: "JSON",
          LANG: "EN",
          DB: "FM08",
          STARTDATE: "203001",
          ENDDATE: "",
          STARTPOSITION: "",
        },
        NEXTPOSITION: null,
        RESULTSET: [{ SERIES_CODE: "FXERD01", VALUES: { SURVEY_DATES: [], VALUES: [] } }],
      },
    },
  });
  // Databases the BOJ has but the recordings lack (the hits of "CPI" and "Tankan" name their series
  // lists): a series list with one heading stands in (it matches no words, so the search is as
  // before), and checking the named calls checks the server, not the recordings' reach.
  upstreams.main.route({
    path: "/api/v1/getMetadata",
    match: (r) => ["PR01", "PR02", "CO"].includes(p(r, "db") ?? ""),
    reply: (r) => ({
      json: {
        STATUS: 200,
        MESSAGEID: "M181000I",
        MESSAGE: "Successfully completed",
        DATE: "2026-02-21T05:00:11.476+09:00",
        DB: p(r, "db"),
        RESULTSET: [{ SERIES_CODE: "", NAME_OF_TIME_SERIES: "(synthetic heading)", LAYER1: 1 }],
      },
    }),
  });
  upstreams.main.route({
    path: "/api/v3/wds",
    match: (r) => p(r, "qterm") === "outage",
    reply: { status: 503, body: "Service Unavailable" },
  });
  upstreams.main.route({
    path: "/w/api.php",
    match: (r) => p(r, "list") === "geosearch" && p(r, "gscoord") === "1|1" && p(r, "gsradius") !== "10000",
    reply: { json: { batchcomplete: true, query: { geosearch: [] } } },
  });
  upstreams.main.route({
    path: "/w/api.php",
    match: (r) => p(r, "titles") === "Finnes ikke",
    reply: { fixture: "wikipedia/synthetic_missing_fv2.json" },
  });
  upstreams.main.route({
    path: "/w/api.php",
    match: (r) => p(r, "list") === "search" && p(r, "srsearch") === "Finnes ikke",
    reply: { fixture: "wikipedia/search_en_meaning_formatversion1.json" },
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * One paragraph on a run against a server with structured content off: what a client that
 * forwards both blocks then pays (the text only), and whether the text alone still leads there.
 */
export function textOnlySummary(results: readonly TaskResult[], structured: readonly TaskResult[]): string {
  const calls = results.map((r) => r.calls);
  const text = results.map((r) => r.textTokens);
  const both = results.reduce((a, r) => a + r.bothTokens, 0);
  const usual = structured.reduce((a, r) => a + r.bothTokens, 0);
  return `With \`structured_content: off\` (MCP_STRUCTURED_CONTENT=off; the agent reads the next calls from the ` +
    `text): answered ${results.filter((r) => r.answered).length} of ${results.length}; calls median ${
      median(calls)
    }, max ${Math.max(...calls)}; tokens per task median ${median(text)}, max ${
      Math.max(...text)
    }; a client ` +
    `that forwards both blocks pays ${both} tokens in all, ${
      (both / Math.max(1, text.reduce((a, b) => a + b, 0))).toFixed(2)
    }× ` +
    `the text and ${(both / Math.max(1, usual)).toFixed(2)}× what it pays with structured content on.`;
}

/** The markdown table and summary of a run. */
export function report(results: readonly TaskResult[]): string {
  const lines = [
    "| Task | Source | Question | Calls | Tokens (text) | Tokens (text + structured) | Answered | Path |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...results.map((r) =>
      `| ${r.task.id} | ${r.task.source} | ${
        r.task.question.replaceAll("|", "\\|")
      } | ${r.calls} | ${r.textTokens} | ${r.bothTokens} | ${r.answered ? "yes" : `no: ${r.deadEnd}`} | ${
        r.trail.join(" → ")
      } |`
    ),
  ];
  const calls = results.map((r) => r.calls);
  const text = results.map((r) => r.textTokens);
  const both = results.map((r) => r.bothTokens);
  const ratio = both.reduce((a, b) => a + b, 0) / Math.max(1, text.reduce((a, b) => a + b, 0));
  lines.push(
    "",
    `${results.length} tasks over ${new Set(results.map((r) => r.task.source)).size} sources; ` +
      `answered ${results.filter((r) => r.answered).length}; dead ends ${
        results.filter((r) => !r.answered).length
      }; ` +
      `calls median ${median(calls)}, max ${Math.max(...calls)}; tokens per task (text) median ${
        median(text)
      }, ` +
      `max ${Math.max(...text)}; text + structured median ${median(both)}, max ${Math.max(...both)} ` +
      `(${ratio.toFixed(2)}× the text in all).`,
  );
  return lines.join("\n");
}

if (import.meta.main) {
  const results = await runSuite();
  console.log(report(results));
  console.log(`\n${answerBudgets(results)}`);
  console.log(`\n${textOnlySummary(await runSuite(undefined, { structured: false }), results)}`);
  for (const r of results.filter((x) => !x.answered)) console.log(`\n${r.task.id}: ${r.deadEnd}`);
  const show = Deno.env.get("TASK_SHOW");
  for (const r of results.filter((x) => show && x.task.id.startsWith(show))) {
    console.log(`\n=== ${r.task.id}\n${r.texts.join("\n---\n")}`);
  }
}
