// Token counting and the auto|screen|file decision for large results.
//
// Tokens are counted with a real byte-pair tokenizer (gpt-tokenizer, the tiktoken encodings):
// o200k_base for the models that use it (gpt-4o, gpt-4.1, gpt-5, o-series), cl100k_base for older
// GPT models and as the stand-in for models whose tokenizer is not public (Claude, Gemini), as
// FRED's file-output design does. An encoding's rank table is 1.2-2.4 MB of JavaScript, so it is
// imported on first use, not at start-up. Large row sets are counted on a stratified sample and
// extrapolated, so deciding about 100,000 rows costs the same as deciding about 400.

/** Where a result goes: inline to the model, or to a file with an excerpt. */
export type OutputMode = "auto" | "screen" | "file";

/** The output modes, for zod enums. */
export { OUTPUT_MODES } from "./modes.ts";

/** The encodings the server counts with. */
export type EncodingName = "cl100k_base" | "o200k_base";

/** What a model name implies: its tokenizer (or the nearest public one) and context size. */
export interface ModelProfile {
  /** The matched family, e.g. `claude`, `gpt-4o`; `unknown` when nothing matched. */
  family: string;
  encoding: EncodingName;
  /** The model's context window in tokens. */
  contextTokens: number;
}

// First match wins: more specific names before their prefixes (gpt-4o before gpt-4).
const MODELS: readonly [RegExp, ModelProfile][] = [
  [/^(gpt-4\.1)/i, { family: "gpt-4.1", encoding: "o200k_base", contextTokens: 1_047_576 }],
  [/^(gpt-5)/i, { family: "gpt-5", encoding: "o200k_base", contextTokens: 400_000 }],
  [/^(chatgpt-4o|gpt-4o|gpt-4\.5)/i, { family: "gpt-4o", encoding: "o200k_base", contextTokens: 128_000 }],
  [/^(o1|o3|o4)(-|$)/i, { family: "o-series", encoding: "o200k_base", contextTokens: 200_000 }],
  [/^gpt-4-(turbo|\d{4}-preview)/i, {
    family: "gpt-4-turbo",
    encoding: "cl100k_base",
    contextTokens: 128_000,
  }],
  [/^gpt-4/i, { family: "gpt-4", encoding: "cl100k_base", contextTokens: 8_192 }],
  [/^gpt-3\.5/i, { family: "gpt-3.5", encoding: "cl100k_base", contextTokens: 16_385 }],
  [/^claude/i, { family: "claude", encoding: "cl100k_base", contextTokens: 200_000 }],
  [/^gemini/i, { family: "gemini", encoding: "cl100k_base", contextTokens: 1_000_000 }],
];

const UNKNOWN: ModelProfile = { family: "unknown", encoding: "cl100k_base", contextTokens: 200_000 };

/**
 * The profile of a model name (`FRED_MODEL_NAME`): its encoding and context size. Unknown names
 * get cl100k_base and a 200,000-token context, the default model's (claude-sonnet-4).
 */
export function modelProfile(modelName: string): ModelProfile {
  const name = modelName.trim();
  return MODELS.find(([re]) => re.test(name))?.[1] ?? UNKNOWN;
}

/** Counts the tokens of a text in one encoding. */
export interface TokenCounter {
  readonly encoding: EncodingName;
  count(text: string): number;
}

type CountTokens = (text: string, options: { disallowedSpecial: Set<string> }) => number;

const counters = new Map<EncodingName, Promise<TokenCounter>>();

/** The counter of an encoding, importing its rank table on first use (then cached). */
export function tokenCounter(encoding: EncodingName): Promise<TokenCounter> {
  let counter = counters.get(encoding);
  if (!counter) {
    // Literal specifiers, so `deno compile` bundles both tables; only the one asked for is loaded.
    const loading: Promise<{ countTokens: CountTokens }> = encoding === "o200k_base"
      ? import("gpt-tokenizer/encoding/o200k_base")
      : import("gpt-tokenizer/encoding/cl100k_base");
    // Text from upstreams may contain "<|endoftext|>": count it as text, never refuse it.
    const plain = { disallowedSpecial: new Set<string>() };
    counter = loading.then((m) => ({
      encoding,
      count: (text: string) => boundedCount(text, (piece) => m.countTokens(piece, plain)),
    }));
    counters.set(encoding, counter);
    counter.catch(() => counters.delete(encoding));
  }
  return counter;
}

/**
 * The longest stretch of one kind (whitespace or not) counted as one piece. Byte-pair encoding
 * merges within one pre-token in time that grows faster than its length (80,000 "x" took 12 s,
 * 200,000 "[" 13.6 s), so a longer stretch is cut into pieces of this size and their counts
 * added: a few tokens more or less than exact, in time linear in the text.
 */
export const LONGEST_PIECE = 128;
/** Texts longer than this (in UTF-16 units) are counted on a sample and extrapolated. */
export const SAMPLE_ABOVE = 256 * 1024;
/** Slices in that sample, and the length of each. */
const SAMPLE_SLICES = 64;
const SLICE_LENGTH = 2048;

/**
 * Tokens of `text` by `countPieces`, in time linear in the text and bounded for any text: a
 * stretch of more than {@linkcode LONGEST_PIECE} characters of one kind (white space, letters,
 * digits, punctuation) is counted in pieces, and a text above {@linkcode SAMPLE_ABOVE} characters
 * is counted on evenly spaced slices scaled to its length, so hostile upstream text costs a few
 * milliseconds at most, never seconds of a shared event loop.
 */
export function boundedCount(text: string, countPieces: (piece: string) => number): number {
  if (text.length <= SAMPLE_ABOVE) return countInPieces(text, countPieces);
  const step = text.length / SAMPLE_SLICES;
  let tokens = 0;
  let sampled = 0;
  for (let i = 0; i < SAMPLE_SLICES; i++) {
    const from = Math.floor(i * step);
    const slice = text.slice(from, from + SLICE_LENGTH);
    tokens += countInPieces(slice, countPieces);
    sampled += slice.length;
  }
  return Math.ceil(tokens * text.length / sampled);
}

function countInPieces(text: string, countPieces: (piece: string) => number): number {
  let total = 0;
  let start = 0;
  let run = 0;
  let kind = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const k = charKind(c);
    if (k !== kind) {
      kind = k;
      run = 1;
      continue;
    }
    // Never between the two halves of a surrogate pair.
    if (++run > LONGEST_PIECE && !(c >= 0xdc00 && c <= 0xdfff)) {
      total += countPieces(text.slice(start, i));
      start = i;
      run = 1;
    }
  }
  return total + (start < text.length ? countPieces(text.slice(start)) : 0);
}

/**
 * The kind of a character as the encoders' pre-tokenizers split text: white space, letters
 * (any non-ASCII character counts as one), digits, and the rest. A pre-token never spans two
 * kinds, so text whose stretches of one kind are short is counted exactly, in one piece.
 */
function charKind(c: number): number {
  if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) return 0;
  if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c >= 0x80) return 1;
  if (c >= 0x30 && c <= 0x39) return 2;
  return 3;
}

/** Options for {@linkcode countRowsTokens}. */
export interface CountRowsOptions {
  /** How one row is written out (default: JSON). */
  serialize?: (row: unknown) => string;
  /** Rows counted before extrapolating (default 400). */
  sampleSize?: number;
}

/**
 * Tokens of `rows` written as a JSON array: exact for up to `sampleSize` rows; above that a
 * stratified sample (one row from each of `sampleSize` equal slices, at a pseudo-random place
 * within it) is counted and scaled to the whole set.
 */
export function countRowsTokens(
  rows: readonly unknown[],
  counter: TokenCounter,
  options: CountRowsOptions = {},
): number {
  const serialize = options.serialize ?? ((row: unknown) => JSON.stringify(row));
  const sampleSize = Math.max(1, options.sampleSize ?? 400);
  if (rows.length === 0) return counter.count("[]");
  if (rows.length <= sampleSize) return counter.count(`[${rows.map(serialize).join(",")}]`);
  const step = rows.length / sampleSize;
  const sample: string[] = [];
  // A pseudo-random place in each slice (seeded, so a result is always counted the same): fixed
  // spacing would alias with periodic data, e.g. every 7th value being a round number.
  const random = mulberry32(rows.length);
  for (let i = 0; i < sampleSize; i++) {
    sample.push(serialize(rows[Math.min(rows.length - 1, Math.floor((i + random()) * step))]));
  }
  // Each sampled row with the comma that joins it; the brackets are counted once.
  const sampled = counter.count(sample.join(","));
  return Math.ceil((sampled / sampleSize) * rows.length) + 2;
}

/** A small seeded generator of numbers in [0, 1) (mulberry32). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The settings behind the token budget of `auto` mode. */
export interface TokenBudgetOptions {
  /**
   * The ceiling for one inline result (`FRED_SAFE_TOKEN_LIMIT`). When set it replaces the
   * context-derived value below: it may raise the budget as well as lower it.
   */
  safeTokenLimit?: number;
  /** The model's whole context in tokens (`FRED_MODEL_TOKEN_LIMIT`, else the model's own). */
  modelTokenLimit: number;
  /** Share of the context assumed already used by history and other tools (0.75). */
  assumeContextUsed: number;
  /** Share of the safe limit one result may take (0.7). */
  safetyMargin: number;
}

/**
 * Tokens one result may take in `auto` mode: the safe limit (`safeTokenLimit`, or else what the
 * context leaves: `modelTokenLimit * (1 - assumeContextUsed)`) times the safety margin. For the
 * default model (claude-sonnet-4, 200,000 tokens): 200,000 * 0.25 * 0.7 = 35,000.
 */
export function tokenBudget(options: TokenBudgetOptions): number {
  const safe = options.safeTokenLimit ?? options.modelTokenLimit * (1 - options.assumeContextUsed);
  return Math.max(0, Math.floor(safe * options.safetyMargin));
}

/** What {@linkcode chooseOutput} weighs. */
export interface OutputFacts {
  /** Rows in the whole result. */
  rows: number;
  /** Counted (or, for large results, extrapolated) tokens of the whole result. */
  estimatedTokens: number;
  /** Token budget from {@linkcode tokenBudget}. */
  budget: number;
  /** Most rows shown inline (FRED's `FRED_SCREEN_ROW_THRESHOLD`). */
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
