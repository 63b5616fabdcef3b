// The output modes and file formats as values, in a module of their own: provider settings
// (lib/providers/fred/config.ts) name them at start-up, and importing them from tokens.ts and
// writers.ts would load the tokenizer and the row writers with every start (docs/BENCHMARKS.md).

/** The output modes, for zod enums (tokens.ts `OutputMode`). */
export const OUTPUT_MODES = ["auto", "screen", "file"] as const;

/** The file formats, for zod enums (writers.ts `FileFormat`). */
export const FILE_FORMATS = ["csv", "json"] as const;
