// The article a title leads to in a query answer, or a clear error: shared by wikipedia-summary
// and wikipedia-content.
import { ToolError } from "../../errors.ts";
import { clip } from "../../html.ts";
import type { WikipediaApi } from "./client.ts";
import { SHORT_TEXT_MAX, TITLE_MAX } from "./format.ts";
import { interwikiOf, parsePages, resolveTitle } from "./parse.ts";
import type { QueryPage } from "./parse.ts";
import { editionName } from "./language.ts";

/** The page a title led to, and how (redirect, normalization, section fragment). */
export interface Located {
  page: QueryPage;
  redirectedFrom: string | null;
  normalizedFrom: string | null;
  fragment: string | null;
}

/** The page a query answer holds for the asked title, or the error that says why there is none. */
export function locate(body: unknown, asked: string, language: string, api: WikipediaApi): Located {
  const resolution = resolveTitle(body, asked);
  const page = parsePages(body)[0];
  if (!page) {
    const prefix = interwikiOf(body);
    if (prefix !== null) {
      throw new ToolError(
        "VALIDATION_ERROR",
        `"${asked}" is a link to another wiki ("${prefix}:"), not an article title on ${api.host(language)}`,
        {
          field: "title",
          hint: `Leave out the "${prefix}:" prefix; for another language edition pass it as language`,
        },
      );
    }
    throw new ToolError("API_ERROR", `${editionName(language)} sent no page for "${asked}"`, {
      retryable: true,
      hint: "Try again; if it persists, search for the title with wikipedia-search",
    });
  }
  if (page.invalid) {
    throw new ToolError(
      "VALIDATION_ERROR",
      `"${asked}" is not a valid Wikipedia title${
        page.invalidReason ? `: ${clip(page.invalidReason, SHORT_TEXT_MAX)}` : ""
      }`,
      { field: "title", hint: "Use a title as wikipedia-search returns it" },
    );
  }
  if (page.missing) {
    throw new ToolError(
      "NOT_FOUND",
      `There is no article titled "${clip(page.title, TITLE_MAX)}" on ${api.host(language)}${
        resolution.redirectedFrom ? ` (redirected from "${clip(resolution.redirectedFrom, TITLE_MAX)}")` : ""
      }`,
      {
        messageId: "missingtitle",
        hint: `Find the exact title with wikipedia-search (language "${language}"), then call again`,
        next: [{
          tool: "wikipedia-search",
          arguments: { query: clip(asked, TITLE_MAX), language, limit: 5 },
          for: "articles whose text matches the title",
        }],
      },
    );
  }
  // Fields that are short in any real answer are clipped, so a broken upstream cannot blow up
  // a result; the article text itself is cut losslessly (wikipedia-content reads on).
  return {
    page: { ...page, title: clip(page.title, TITLE_MAX) },
    redirectedFrom: resolution.redirectedFrom === null ? null : clip(resolution.redirectedFrom, TITLE_MAX),
    normalizedFrom: resolution.normalizedFrom === null ? null : clip(resolution.normalizedFrom, TITLE_MAX),
    fragment: resolution.fragment === null ? null : clip(resolution.fragment, TITLE_MAX),
  };
}

/** Whether a page is a disambiguation page (its page props say so). */
export function isDisambiguation(page: QueryPage): boolean {
  return "disambiguation" in page.pageprops;
}
