// wikipedia-geosearch: articles near a point, nearest first.
import { geosearchView } from "../view.ts";
import { z } from "zod";
import { fitToLimit, formatText } from "../../../mcp/shaping.ts";
import type { NextCall, ToolCallContext, ToolDefinition } from "../../../mcp/provider.ts";
import type { WikipediaApi } from "../client.ts";
import { clip } from "../../../html.ts";
import { creditLine, n, source, sourceSchema, TITLE_MAX } from "../format.ts";
import type { Source } from "../format.ts";
import {
  fileName,
  fileSchema,
  formatField,
  outputField,
  withFile,
  written,
} from "../../../output/result_files.ts";
import type { FileOut, Written } from "../../../output/result_files.ts";
import { parseGeosearch } from "../parse.ts";
import {
  ANNOTATIONS,
  GEO_MAX_LIMIT,
  languageField,
  MAX_RADIUS_M,
  MIN_RADIUS_M,
  TOOLSET,
} from "../schemas.ts";

// The API cannot page: the envelope is carried (offset 0, next_offset null) but not declared.
const geoOutput = z.looseObject({
  results: z.array(z.looseObject({ title: z.string() })),
  total: z.number(),
  source: sourceSchema,
  file: fileSchema.optional(),
});

/** Everything a geosearch answer carries (the output schema declares the main fields only). */
type GeoOut = {
  center: { lat: number; lon: number };
  radius_m: number;
  language: string;
  results: {
    title: string;
    pageid: number | null;
    url: string;
    lat: number;
    lon: number;
    distance_m: number | null;
  }[];
  limit_reached: boolean;
  total: number;
  count: number;
  offset: number;
  has_more: boolean;
  next_offset: number | null;
  source: Source;
  file?: FileOut;
};

/** Articles shown in the answer when no limit is given. */
const GEO_DEFAULT_LIMIT = 10;

/** `wikipedia-geosearch`. */
export function geosearchTool(api: WikipediaApi): ToolDefinition {
  const input = z.strictObject({
    lat: z.number().refine((v) => v >= -90 && v <= 90, "must be between -90 and 90").describe(
      "Latitude (WGS 84)",
    ),
    lon: z.number().refine((v) => v >= -180 && v <= 180, "must be between -180 and 180").describe(
      "Longitude (WGS 84)",
    ),
    radius_m: z.int()
      .min(MIN_RADIUS_M, {
        message: `must be at least ${MIN_RADIUS_M} metres (the Wikipedia API's minimum)`,
      })
      .max(MAX_RADIUS_M, {
        message:
          `must be at most ${MAX_RADIUS_M} metres (the Wikipedia API's maximum); for a wider area, search from several centres`,
      })
      .optional().transform((v) => v ?? 1000)
      .describe("Radius in metres (default 1000)"),
    limit: z.int().min(1).max(GEO_MAX_LIMIT).optional().describe(
      `Most articles (default ${GEO_DEFAULT_LIMIT}, ${GEO_MAX_LIMIT} to a file)`,
    ),
    language: languageField(api.defaultLanguage),
    response_format: formatField,
    output: outputField("all articles"),
  });
  return {
    name: "wikipedia-geosearch",
    title: "Wikipedia nearby",
    toolset: TOOLSET,
    description:
      "Wikipedia articles within radius_m of a point, nearest first, with distances. No paging: raise limit or write a file.",
    input,
    output: geoOutput,
    view: geosearchView,
    annotations: ANNOTATIONS,
    async handler(args: z.output<typeof input>, ctx: ToolCallContext) {
      const language = args.language ?? api.defaultLanguage;
      api.origin(language);
      const toFile = args.output === "file";
      const limit = args.limit ?? (toFile ? GEO_MAX_LIMIT : GEO_DEFAULT_LIMIT);
      const answer = await api.call(
        language,
        {
          action: "query",
          list: "geosearch",
          gscoord: `${args.lat}|${args.lon}`,
          gsradius: args.radius_m,
          gslimit: limit,
          gsnamespace: 0,
        },
        ctx,
        api.deadline(),
      );
      const hits = parseGeosearch(answer.data).slice(0, limit);
      const all = hits.map((h) => ({
        title: clip(h.title, TITLE_MAX),
        pageid: h.pageid,
        url: api.pageUrl(language, clip(h.title, TITLE_MAX)),
        lat: h.lat,
        lon: h.lon,
        distance_m: h.dist,
      }));
      const src = source(api.host(language), answer.url);
      const limitReached = hits.length >= limit;
      let file: Written | null = null;
      if (toFile) {
        const saved = await ctx.files.save({
          name: fileName("geosearch", `${args.lat}_${args.lon}_${args.radius_m}m`),
          format: args.response_format === "json" ? "json" : "csv",
          rows: [all],
          head: { center: { lat: args.lat, lon: args.lon }, radius_m: args.radius_m, language, source: src },
          itemsKey: "results",
          description:
            `Wikipedia (${language}) articles within ${args.radius_m} m of ${args.lat}, ${args.lon}: ${all.length}; ${src.license}`,
        });
        file = written(
          saved,
          `${n(all.length)} articles`,
          ctx,
          limitReached
            ? `the limit of ${limit} was reached, more may lie inside the radius: shrink the radius or search from other centres`
            : undefined,
        );
      }
      // With a file the answer previews the nearest articles; the file holds them all.
      const results = toFile ? all.slice(0, args.limit ?? GEO_DEFAULT_LIMIT) : all;
      const room = ctx.limits.characterLimit - (file ? 2 * file.line.length : 0);
      const rendered = fitToLimit(results, room, ({ items, truncated }) => {
        const cut = items.length < all.length;
        const structured: GeoOut = {
          center: { lat: args.lat, lon: args.lon },
          radius_m: args.radius_m,
          language,
          results: items,
          limit_reached: limitReached,
          total: all.length,
          count: items.length,
          offset: 0,
          has_more: cut,
          next_offset: null,
          source: src,
          ...(file ? { file: file.out } : {}),
        };
        const text = formatText(args.response_format, structured, () => {
          const lines = [
            `## Wikipedia articles within ${n(args.radius_m)} m of ${args.lat}, ${args.lon} (${language})`,
            "",
            items.length === 0
              ? "No articles with coordinates lie inside this radius. Try a larger radius (up to 10,000 m) or another language edition."
              : `${cut ? `${items.length} of ${all.length}` : items.length} article(s), nearest first:`,
            "",
          ];
          items.forEach((r, i) => {
            const d = r.distance_m === null ? "" : `${n(Math.round(r.distance_m))} m · `;
            lines.push(`${i + 1}. **${r.title}**: ${d}${r.lat}, ${r.lon} · ${r.url}`);
          });
          if (cut && !file) {
            lines.push(
              "",
              `Showing ${items.length} of ${all.length} articles to stay within the response limit: call again with output "file" to get them all, or narrow the radius.`,
            );
          } else if (limitReached && !file) {
            lines.push(
              "",
              `The limit of ${limit} was reached: more articles may lie inside the radius. Raise limit (max ${GEO_MAX_LIMIT}), use output "file", or shrink the radius.`,
            );
          }
          if (truncated && file) {
            lines.push("", "The answer shows the nearest ones; the file holds them all.");
          }
          lines.push("", creditLine(src));
          return lines.join("\n");
        });
        return { text, structured };
      });
      return { ...withFile(rendered, file), ...geoNext(args, language, rendered.structured.results) };
    },
  };
}

/**
 * What an answer names next: with no article in the radius, the same search ten times wider (up
 * to the widest), else the summaries of the nearest articles.
 */
function geoNext(
  args: { lat: number; lon: number; radius_m: number },
  language: string,
  results: readonly { title: string }[],
): { next?: NextCall[] } {
  if (results.length === 0) {
    if (args.radius_m >= MAX_RADIUS_M) return {};
    const wider = Math.min(MAX_RADIUS_M, args.radius_m * 10);
    return {
      next: [{
        tool: "wikipedia-geosearch",
        arguments: { lat: args.lat, lon: args.lon, radius_m: wider, language },
        for: `a ${wider.toLocaleString("en-US")} m radius`,
      }],
    };
  }
  return {
    next: results.slice(0, 3).map((r) => ({
      tool: "wikipedia-summary",
      arguments: { title: r.title, language },
      for: `summary of "${r.title}"`,
    })),
  };
}
