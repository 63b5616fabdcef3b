// Reading SNL answers defensively: the search fields come from the official documentation (no
// recorded body was found), the article fields from recorded article JSON, and one field was
// renamed in 2024 (`first_two_sentences` -> `first_sentences`), so both names are read. Fields
// that are short in any real answer are clipped, so a broken upstream cannot blow up a result.
import { boundedUrl, clip, decodeEntities, inlineText } from "../../html.ts";
import { walkMarkup } from "../../markup.ts";
import type { Tag } from "../../markup.ts";

/** Most characters kept of a title, headword, name or slug. */
export const NAME_MAX = 300;
/** Most characters kept of a snippet or opening sentences. */
export const SNIPPET_MAX = 1000;
/** Most authors and images kept of one article. */
export const MAX_AUTHORS = 50;
export const MAX_IMAGES = 20;

type Json = Record<string, unknown>;

function obj(value: unknown): Json | null {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? value as Json : null;
}

function str(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? value : null;
}

function short(value: unknown, max = NAME_MAX): string | null {
  const s = str(value);
  return s === null ? null : clip(s, max);
}

function link(value: unknown): string | null {
  return boundedUrl(str(value));
}

/**
 * The message of an error object sent instead of an answer (`{"error": ...}`, `{"errors":
 * [...]}`, `{"message": ...}`, the shapes Rails APIs and proxies use), or null.
 */
export function errorMessageOf(body: unknown): string | null {
  const o = obj(body);
  if (!o) return null;
  const texts = [o["error"], o["errors"], o["message"], o["detail"]].flatMap(function flat(v): string[] {
    if (typeof v === "string") return v.trim() ? [v.trim()] : [];
    if (Array.isArray(v)) return v.flatMap(flat);
    const inner = obj(v);
    return inner ? [inner["message"], inner["detail"], inner["title"]].flatMap(flat) : [];
  });
  return texts.length ? clip(texts.join("; "), SNIPPET_MAX) : null;
}

function num(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string" && /^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  return null;
}

function int(value: unknown): number | null {
  const v = num(value);
  return v !== null && Number.isInteger(v) ? v : null;
}

/** One search hit. */
export interface SnlHit {
  articleId: number | null;
  title: string;
  headword: string | null;
  clarification: string | null;
  /** The article page, `article_url` (or built from the permalink). */
  url: string | null;
  /** The name in the article's URL (`permalink`), for snl-article. */
  slug: string | null;
  snippet: string | null;
  /** `first_sentences`, or `first_two_sentences` from before the 2024 rename. */
  firstSentences: string | null;
  rank: number | null;
  license: string | null;
  taxonomyId: number | null;
  taxonomyTitle: string | null;
  articleTypeId: number | null;
  encyclopediaId: number | null;
  imageUrl: string | null;
  imageLicense: string | null;
}

/** The slug of an article URL's path (`/Oslo` -> `Oslo`), decoded, or null. */
export function slugOfPath(path: string): string | null {
  const trimmed = path.replace(/^\/+|\/+$/g, "").replace(/\.json$/, "");
  if (!trimmed || trimmed.includes("/")) return null;
  try {
    return decodeURIComponent(trimmed);
  } catch {
    return trimmed;
  }
}

function slugOf(permalink: string | null, url: string | null): string | null {
  if (permalink) {
    if (/^https?:\/\//i.test(permalink)) {
      try {
        return slugOfPath(new URL(permalink).pathname);
      } catch {
        return null;
      }
    }
    return permalink;
  }
  if (url) {
    try {
      return slugOfPath(new URL(url).pathname);
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * Reads a search answer: a JSON array (an object with a `results` array is read too). Null when
 * it is neither, or when none of its items is a hit.
 */
export function parseSearch(body: unknown): SnlHit[] | null {
  const list = Array.isArray(body)
    ? body
    : Array.isArray(obj(body)?.["results"])
    ? obj(body)!["results"] as unknown[]
    : null;
  if (!list) return null;
  const hits: SnlHit[] = [];
  for (const raw of list) {
    const item = obj(raw);
    if (!item) continue;
    const headword = short(item["headword"]);
    const title = short(item["title"]) ?? headword;
    if (!title) continue;
    const url = link(item["article_url"]) ??
      (/^https?:/.test(str(item["permalink"]) ?? "") ? link(item["permalink"]) : null);
    const slug = slugOf(str(item["permalink"]), url);
    hits.push({
      articleId: int(item["article_id"]),
      title,
      headword,
      clarification: short(item["clarification"]),
      url,
      slug: slug === null || slug.length > NAME_MAX ? null : slug,
      snippet: short(item["snippet"], SNIPPET_MAX),
      firstSentences: short(item["first_sentences"], SNIPPET_MAX) ??
        short(item["first_two_sentences"], SNIPPET_MAX),
      rank: num(item["rank"]),
      license: short(item["license"]) ?? short(item["license_name"]),
      taxonomyId: int(item["taxonomy_id"]),
      taxonomyTitle: short(item["taxonomy_title"]),
      articleTypeId: int(item["article_type_id"]),
      encyclopediaId: int(item["encyclopedia_id"]),
      imageUrl: link(item["first_image_url"]),
      imageLicense: short(item["first_image_license"]),
    });
  }
  // A list of things that are no hits at all is not an empty result.
  if (list.length > 0 && hits.length === 0) return null;
  return hits;
}

/** An image attached to an article (field names vary; read best-effort). */
export interface SnlImage {
  url: string | null;
  caption: string | null;
  license: string | null;
}

/** An article's JSON. */
export interface SnlArticle {
  title: string;
  headword: string | null;
  url: string | null;
  subjectTitle: string | null;
  subjectUrl: string | null;
  /** HTML body; null when only plain text came. */
  xhtmlBody: string | null;
  plainBody: string | null;
  createdAt: string | null;
  changedAt: string | null;
  licenseName: string | null;
  metadataLicenseName: string | null;
  /** The first {@linkcode MAX_AUTHORS} authors. */
  authors: string[];
  /** How many authors the article names. */
  authorsTotal: number;
  /** The first {@linkcode MAX_IMAGES} images. */
  images: SnlImage[];
  /** How many images the article has. */
  imagesTotal: number;
}

/** Reads article JSON, or null when the body is not an article. */
export function parseArticle(body: unknown): SnlArticle | null {
  const a = obj(body);
  if (!a) return null;
  const metadata = obj(a["metadata"]) ?? {};
  const headword = short(a["headword"]) ?? short(metadata["headword"]);
  const title = short(a["title"]) ?? headword;
  const xhtml = str(a["xhtml_body"]);
  const plain = str(a["plain_text_body"]);
  if (!title || (xhtml === null && plain === null)) return null;
  const allAuthors = (Array.isArray(a["authors"]) ? a["authors"] : [])
    .map((x) => short(obj(x)?.["full_name"]) ?? short(obj(x)?.["name"]) ?? short(x))
    .filter((x): x is string => x !== null);
  const allImages = Array.isArray(a["images"]) ? a["images"] : [];
  const images = allImages.slice(0, MAX_IMAGES).map((raw) => {
    const i = obj(raw) ?? {};
    return {
      url: link(i["url"]) ?? link(i["full_size_url"]) ?? link(i["standard_size_url"]) ?? link(i["src"]) ??
        link(raw),
      caption: short(i["caption"], SNIPPET_MAX) ?? short(i["description"], SNIPPET_MAX) ??
        short(i["title"], SNIPPET_MAX),
      license: short(i["license"]) ?? short(i["license_name"]),
    };
  });
  return {
    title,
    headword,
    url: link(a["url"]) ?? link(a["article_url"]) ?? link(a["permalink"]),
    subjectTitle: short(a["subject_title"]),
    subjectUrl: link(a["subject_url"]),
    xhtmlBody: xhtml,
    plainBody: plain,
    createdAt: short(a["created_at"], 64),
    changedAt: short(a["changed_at"], 64),
    licenseName: short(a["license_name"], 100),
    metadataLicenseName: short(a["metadata_license_name"], 100),
    authors: allAuthors.slice(0, MAX_AUTHORS),
    authorsTotal: allAuthors.length,
    images,
    imagesTotal: allImages.length,
  };
}

/** A link found in an article body. */
export interface Link {
  text: string;
  url: string;
}

const BLOCKS = new Set([
  "p",
  "div",
  "ul",
  "ol",
  "table",
  "tr",
  "blockquote",
  "section",
  "figure",
  "figcaption",
  "dl",
  "dt",
  "dd",
]);

/** What a tag becomes in the text: block breaks, markdown headings and list items, cell bars. */
function tagText(t: Tag): string {
  const heading = /^h([1-6])$/.exec(t.name);
  if (heading) return t.closing ? "\n\n" : `\n\n${"#".repeat(Math.max(2, Number(heading[1])))} `;
  if (BLOCKS.has(t.name)) return "\n\n";
  if (t.name === "li" && !t.closing) return "\n- ";
  if (t.name === "br" && !t.closing && /^\s*\/?$/.test(t.rest)) return "\n";
  if ((t.name === "td" || t.name === "th") && t.closing && /^\s*$/.test(t.rest)) return " | ";
  return "";
}

/**
 * An article body as readable text with light markdown (headings, list items), and the links it
 * contains (SNL's cross-references point at other articles). One linear walk (lib/markup.ts):
 * a link is an `<a>` with an absolute href whose `</a>` comes before another `<a>`.
 */
export function bodyToText(html: string): { text: string; links: Link[] } {
  const links: Link[] = [];
  const seen = new Set<string>();
  const out: string[] = [];
  let open: { rest: string; from: number } | null = null;
  walkMarkup(html, {
    // White space in markup is one space; the line breaks come from the tags.
    text: (run) => out.push(run.replace(/[^\S ]\s*| \s+/g, " ")),
    tag(t) {
      if (t.name === "a") {
        if (!t.closing) open = { rest: t.rest, from: t.end };
        else if (open && /^\s*$/.test(t.rest)) {
          const text = inlineText(html.slice(open.from, t.start));
          const href = /\bhref\s*=\s*("([^"]*)"|'([^']*)')/i.exec(open.rest);
          const url = decodeEntities(href?.[2] ?? href?.[3] ?? "");
          if (text && /^https?:\/\//i.test(url) && url.length <= 2048 && !seen.has(url)) {
            seen.add(url);
            links.push({ text: clip(text, NAME_MAX), url });
          }
          open = null;
        } else open = null;
        return;
      }
      out.push(tagText(t));
    },
  });
  const text = decodeEntities(out.join(""))
    .split("\n")
    .map((line) => line.replace(/[\t\u00a0][ \t\u00a0]*| [ \t\u00a0]+/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    // A list item's lines belong together.
    .replace(/\n\n(?=- )/g, "\n")
    .trim();
  return { text, links };
}
