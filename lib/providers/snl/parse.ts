import { decodeEntities, inlineText } from "../../html.ts";
// Reading SNL answers defensively: the search fields come from the official documentation (no
// recorded body was found), the article fields from recorded article JSON, and one field was
// renamed in 2024 (`first_two_sentences` -> `first_sentences`), so both names are read.

type Json = Record<string, unknown>;

function obj(value: unknown): Json | null {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? value as Json : null;
}

function str(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? value : null;
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

/** Reads a search answer: a JSON array (an object with a `results` array is read too). Null when it is neither. */
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
    const headword = str(item["headword"]);
    const title = str(item["title"]) ?? headword;
    if (!title) continue;
    const url = str(item["article_url"]) ??
      (/^https?:/.test(str(item["permalink"]) ?? "") ? str(item["permalink"]) : null);
    hits.push({
      articleId: int(item["article_id"]),
      title,
      headword,
      clarification: str(item["clarification"]),
      url,
      slug: slugOf(str(item["permalink"]), url),
      snippet: str(item["snippet"]),
      firstSentences: str(item["first_sentences"]) ?? str(item["first_two_sentences"]),
      rank: num(item["rank"]),
      license: str(item["license"]) ?? str(item["license_name"]),
      taxonomyId: int(item["taxonomy_id"]),
      taxonomyTitle: str(item["taxonomy_title"]),
      articleTypeId: int(item["article_type_id"]),
      encyclopediaId: int(item["encyclopedia_id"]),
      imageUrl: str(item["first_image_url"]),
      imageLicense: str(item["first_image_license"]),
    });
  }
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
  authors: string[];
  images: SnlImage[];
}

/** Reads article JSON, or null when the body is not an article. */
export function parseArticle(body: unknown): SnlArticle | null {
  const a = obj(body);
  if (!a) return null;
  const metadata = obj(a["metadata"]) ?? {};
  const headword = str(a["headword"]) ?? str(metadata["headword"]);
  const title = str(a["title"]) ?? headword;
  const xhtml = str(a["xhtml_body"]);
  const plain = str(a["plain_text_body"]);
  if (!title || (xhtml === null && plain === null)) return null;
  const authors = (Array.isArray(a["authors"]) ? a["authors"] : [])
    .map((x) => str(obj(x)?.["full_name"]) ?? str(obj(x)?.["name"]) ?? str(x))
    .filter((x): x is string => x !== null);
  const images = (Array.isArray(a["images"]) ? a["images"] : []).map((raw) => {
    const i = obj(raw) ?? {};
    return {
      url: str(i["url"]) ?? str(i["full_size_url"]) ?? str(i["standard_size_url"]) ?? str(i["src"]) ??
        str(raw),
      caption: str(i["caption"]) ?? str(i["description"]) ?? str(i["title"]),
      license: str(i["license"]) ?? str(i["license_name"]),
    };
  });
  return {
    title,
    headword,
    url: str(a["url"]) ?? str(a["article_url"]) ?? str(a["permalink"]),
    subjectTitle: str(a["subject_title"]),
    subjectUrl: str(a["subject_url"]),
    xhtmlBody: xhtml,
    plainBody: plain,
    createdAt: str(a["created_at"]),
    changedAt: str(a["changed_at"]),
    licenseName: str(a["license_name"]),
    metadataLicenseName: str(a["metadata_license_name"]),
    authors,
    images,
  };
}

/** A link found in an article body. */
export interface Link {
  text: string;
  url: string;
}

/**
 * An article body as readable text with light markdown (headings, list items), and the links it
 * contains (SNL's cross-references point at other articles).
 */
export function bodyToText(html: string): { text: string; links: Link[] } {
  const links: Link[] = [];
  const seen = new Set<string>();
  let s = html.replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, "");
  s = s.replace(/<a\b([^>]*)>([\s\S]*?)<\/a\s*>/gi, (_m, attrs: string, inner: string) => {
    const text = inlineText(inner);
    const href = /\bhref\s*=\s*("([^"]*)"|'([^']*)')/i.exec(attrs);
    const url = decodeEntities(href?.[2] ?? href?.[3] ?? "");
    if (text && /^https?:\/\//i.test(url) && !seen.has(url)) {
      seen.add(url);
      links.push({ text, url });
    }
    return inner;
  });
  s = s
    .replace(/\r\n?/g, "\n")
    .replace(/\s*\n\s*/g, " ")
    .replace(/<h([1-6])\b[^>]*>/gi, (_m, level: string) => `\n\n${"#".repeat(Math.max(2, Number(level)))} `)
    .replace(/<\/h[1-6]\s*>/gi, "\n\n")
    .replace(/<li\b[^>]*>/gi, "\n- ")
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<\/?(p|div|ul|ol|table|tr|blockquote|section|figure|figcaption|dl|dt|dd)\b[^>]*>/gi, "\n\n")
    .replace(/<\/t[dh]\s*>/gi, " | ")
    .replace(/<[^>]*>/g, "");
  const text = decodeEntities(s)
    .split("\n")
    .map((line) => line.replace(/[ \t\u00a0]+/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    // A list item's lines belong together.
    .replace(/\n\n(?=- )/g, "\n")
    .trim();
  return { text, links };
}
