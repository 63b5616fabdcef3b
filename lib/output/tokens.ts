// Token estimation and the auto|screen|file decision for large results.
//
// No tokenizer ships with the server (dependencies stay few, and the model on the other end is
// unknown), so tokens are estimated from the text the way byte-pair encoders such as cl100k
// split it: runs of letters cost about one token per four characters, runs of digits one per
// three (cl100k cuts numbers into groups of at most three digits), each punctuation mark or
// non-ASCII character one, and whitespace is mostly absorbed into the next word. On JSON and
// tables of numbers this errs high, which is the safe side: a wrong guess writes a file instead
// of flooding the model's context.

/** Where a result goes: inline to the model, or to a file with an excerpt. */
export type OutputMode = "auto" | "screen" | "file";

/** The output modes, for zod enums. */
export const OUTPUT_MODES = ["auto", "screen", "file"] as const;

const PIECE = /[A-Za-z]+|\d+|[ \t]+|[\r\n]+|[^A-Za-z\d \t\r\n]/g;

/** Estimated tokens of `text` (see the module comment for the rules; it errs high). */
export function estimateTokens(text: string): number {
  let tokens = 0;
  for (const match of text.matchAll(PIECE)) {
    const piece = match[0];
    const c = piece.charCodeAt(0);
    if (c === 32 || c === 9) {
      // A single space joins the next word's token; indentation costs about one.
      if (piece.length > 1) tokens += 1;
    } else if (c === 10 || c === 13) {
      tokens += 1;
    } else if (c >= 48 && c <= 57) {
      tokens += Math.ceil(piece.length / 3);
    } else if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) {
      tokens += Math.ceil(piece.length / 4);
    } else {
      tokens += 1;
    }
  }
  return tokens;
}

/** Options for {@linkcode estimateRowsTokens}. */
export interface EstimateRowsOptions {
  /** How one row is written out (default: JSON). */
  serialize?: (row: unknown) => string;
  /** Rows measured before extrapolating (default 200). */
  sampleSize?: number;
}

/**
 * Estimated tokens of `rows`: exact for small sets; for large ones an evenly spaced sample is
 * measured and extrapolated, so estimating 100,000 rows costs the same as 200.
 */
export function estimateRowsTokens(rows: readonly unknown[], options: EstimateRowsOptions = {}): number {
  const serialize = options.serialize ?? ((row: unknown) => JSON.stringify(row));
  const sampleSize = Math.max(1, options.sampleSize ?? 200);
  if (rows.length === 0) return 0;
  if (rows.length <= sampleSize) {
    return rows.reduce<number>((sum, row) => sum + estimateTokens(serialize(row)) + 1, 0);
  }
  const step = rows.length / sampleSize;
  let sampled = 0;
  for (let i = 0; i < sampleSize; i++) {
    sampled += estimateTokens(serialize(rows[Math.floor(i * step)])) + 1;
  }
  return Math.ceil((sampled / sampleSize) * rows.length);
}

/** The settings behind the token budget of `auto` mode. */
export interface TokenBudgetOptions {
  /** Hard ceiling in tokens for one result (seed 003's `FRED_SAFE_TOKEN_LIMIT`, 50,000). */
  safeTokenLimit: number;
  /** The model's whole context in tokens (`FRED_MODEL_TOKEN_LIMIT`, 200,000). */
  modelTokenLimit: number;
  /** Share of the context assumed already used by history and other tools (0.75). */
  assumeContextUsed: number;
  /** Share of what is left that one result may take (0.7). */
  safetyMargin: number;
}

/**
 * Tokens one result may take in `auto` mode: the smaller of the safe limit and the context left
 * over (`modelTokenLimit * (1 - assumeContextUsed)`), times the safety margin. With seed 003's
 * defaults: min(50,000, 200,000 * 0.25) * 0.7 = 35,000.
 */
export function tokenBudget(options: TokenBudgetOptions): number {
  const left = options.modelTokenLimit * (1 - options.assumeContextUsed);
  return Math.max(0, Math.floor(Math.min(options.safeTokenLimit, left) * options.safetyMargin));
}

/** What {@linkcode chooseOutput} weighs. */
export interface OutputFacts {
  /** Rows in the whole result. */
  rows: number;
  /** Estimated tokens of the whole result. */
  estimatedTokens: number;
  /** Token budget from {@linkcode tokenBudget}. */
  budget: number;
  /** Most rows shown inline (seed 003's `FRED_SCREEN_ROW_THRESHOLD`). */
  rowThreshold: number;
  /** Whether the whole result fits within the response character limit. */
  fitsOnScreen: boolean;
  /** The character limit, for the reason text. */
  characterLimit: number;
}

/** The outcome of {@linkcode chooseOutput}. */
export interface OutputDecision {
  mode: "screen" | "file";
  /** Why, in words a model can repeat. */
  reason: string;
  estimated_tokens: number;
  token_budget: number;
}

/**
 * Resolves `auto`: the result goes inline only when it is within the token budget, the row
 * threshold and the character limit; otherwise to a file. `screen` and `file` are kept as asked.
 */
export function chooseOutput(requested: OutputMode, facts: OutputFacts): OutputDecision {
  const base = { estimated_tokens: facts.estimatedTokens, token_budget: facts.budget };
  if (requested !== "auto") {
    return { mode: requested, reason: `output "${requested}" was requested`, ...base };
  }
  if (facts.estimatedTokens > facts.budget) {
    return {
      mode: "file",
      reason: `about ${facts.estimatedTokens.toLocaleString("en-US")} tokens exceed the safe limit of ${
        facts.budget.toLocaleString("en-US")
      }`,
      ...base,
    };
  }
  if (facts.rows > facts.rowThreshold) {
    return {
      mode: "file",
      reason: `${facts.rows.toLocaleString("en-US")} rows exceed the screen threshold of ${
        facts.rowThreshold.toLocaleString("en-US")
      }`,
      ...base,
    };
  }
  if (!facts.fitsOnScreen) {
    return {
      mode: "file",
      reason: `the result does not fit the ${
        facts.characterLimit.toLocaleString("en-US")
      }-character response limit`,
      ...base,
    };
  }
  return { mode: "screen", reason: "the result fits on screen", ...base };
}
