// The four tools' input schemas. Descriptions are short (every agent pays for them on every
// turn): one sentence each, defaults in it. Checks that only refuse bad values (string lengths,
// date shapes, the id pattern) are refinements, so they cost the served schema nothing while
// the error still names the field and the rule.
import { z } from "zod";
import { NOT_WELL_FORMED } from "../../html.ts";
import { FACETS } from "./schemas.ts";
import type { FacetField } from "./schemas.ts";
import { SORT_FIELDS } from "./schemas.ts";

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

function isCalendarDate(value: string): boolean {
  const d = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value;
}

/**
 * A whole number of at least `min`. zod serves its integers with ±2^53 bounds, which only cost
 * tokens: the served schema keeps the minimum alone (validation still stops at 2^53).
 */
function whole(min: number) {
  return z.number().int().min(min).meta({ maximum: undefined });
}

/** `response_format`, described in a few words. */
export const responseFormatField = z.enum(["markdown", "json"]).default("markdown").describe(
  "Default markdown",
);

/** `output`: the answer on screen (one page, cut to the size limit) or a whole-result file. */
function outputField(what: string) {
  return z.enum(["screen", "file"]).default("screen").describe(`file: ${what} as CSV resource`);
}

function dateField(which: string) {
  return z.string().trim()
    .refine((v) => DATE_RE.test(v), 'expected a date as YYYY-MM-DD, e.g. "2020-01-31"')
    .refine((v) => !DATE_RE.test(v) || isCalendarDate(v), "is not a real calendar date")
    .optional()
    .describe(`${which} YYYY-MM-DD`);
}

function filterList(max: number, what: string, example: string) {
  return z.array(
    z.string().trim()
      .refine((v) => v.length > 0, "must not be empty")
      .refine((v) => v.length <= 200, "must be at most 200 characters")
      .refine((v) => !v.includes("^"), 'must not contain "^": give each value as its own list item')
      .refine((v) => v.isWellFormed(), NOT_WELL_FORMED),
  )
    .refine((v) => v.length <= max, `at most ${max} ${what} are accepted`)
    .optional()
    .describe(`Exact ${what}, e.g. ${example}`);
}

function queryField(description: string) {
  return z.string().trim()
    .refine((v) => v.length > 0, "must not be empty")
    .refine((v) => v.length <= 500, "must be at most 500 characters")
    .refine((v) => v.isWellFormed(), NOT_WELL_FORMED)
    .describe(description);
}

const limitField = z.number().int().min(1).max(100).default(20).describe("Per page (default 20)");
const offsetField = whole(0).default(0).describe("Default 0");

/** The input schemas; `fileCap` is the configured `file_max_documents`. */
export function createInputs(fileCap: number) {
  const cap = fileCap.toLocaleString("en-US");
  const search = z.strictObject({
    query: queryField("Search terms, all must match"),
    countries: filterList(20, "countries", "Kenya, World"),
    document_types: filterList(10, "document types", "Brief"),
    languages: filterList(5, "languages", "English"),
    date_from: dateField("From"),
    date_to: dateField("To"),
    sort_by: z.enum(SORT_FIELDS).default("relevance").describe(
      "Default relevance",
    ),
    sort_order: z.enum(["asc", "desc"]).default("desc").describe("Default desc"),
    limit: limitField,
    offset: offsetField,
    response_format: responseFormatField,
    output: outputField(`all (≤${cap})`),
  }).superRefine((args, ctx) => {
    if (args.date_from && args.date_to && args.date_from > args.date_to) {
      ctx.addIssue({
        code: "custom",
        path: ["date_to"],
        message: `must not be before "date_from" ("${args.date_from}")`,
      });
    }
  });

  const details = z.strictObject({
    document_id: z.string().trim()
      .refine(
        (v) => /^D?\d{1,20}$/i.test(v),
        'expected a numeric WDS document id such as "18419181" (the "id" of a search result; a leading "D" is allowed)',
      )
      .describe("Document id or guid"),
    offset: whole(0).default(0).describe("Abstract start (default 0)"),
    response_format: responseFormatField,
  });

  const facetNames = Object.keys(FACETS) as [FacetField, ...FacetField[]];
  const facets = z.strictObject({
    facets: z.array(z.preprocess(
      (v) => typeof v === "string" ? v.replace(/_exact$/, "") : v,
      z.enum(facetNames, { error: () => `expected one of ${facetNames.join(", ")}` }),
    ))
      .refine((v) => v.length >= 1, "name at least one facet")
      .refine((v) => v.length <= 10, "at most 10 facets are accepted")
      .describe("count, docty, lang values fit search filters"),
    query: queryField("Count only these terms' matches").optional(),
    limit: z.number().int().min(1).max(100).default(20).describe("Values per facet (default 20)"),
    offset: whole(0).default(0).describe("Values to skip (default 0)"),
    response_format: responseFormatField,
    output: outputField("all values"),
  });

  const project = z.strictObject({
    project_id: z.string().trim()
      .refine(
        (v) => /^P\d{6}$/i.test(v),
        'expected a World Bank project id: "P" followed by six digits, e.g. "P123365"',
      )
      .describe("Project id, e.g. P123365"),
    limit: limitField,
    offset: offsetField,
    response_format: responseFormatField,
    output: outputField(`all (≤${cap})`),
  });

  return { search, details, facets, project };
}

/** The input schemas, by tool. */
export type Inputs = ReturnType<typeof createInputs>;
