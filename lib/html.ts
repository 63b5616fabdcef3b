// Small helpers for upstream text (search snippets, article bodies): no DOM, no dependency,
// just what turning markup into readable plain text, keeping odd fields short, and finding a
// query's words in it need.

const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
  shy: "",
  ndash: "–",
  mdash: "—",
  hellip: "…",
  laquo: "«",
  raquo: "»",
};

/** Replaces HTML character references (named, decimal and hex) with the characters they stand for. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref[0] === "#") {
      const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[ref.toLowerCase()] ?? whole;
  });
}

/**
 * Plain text of a short HTML fragment: tags dropped, entities decoded, white space collapsed.
 * A tag never spans another `<`: with `[^>]*`, 200,000 `<` without a `>` took 54 s (every `<`
 * scanned to the end); with `[^<>]*` every scan stops at the next `<`, so the time is linear.
 */
export function inlineText(html: string): string {
  return decodeEntities(html.replace(TAG, "")).replace(/\s+/g, " ").trim();
}

/** An HTML tag, in linear time on any text (see {@linkcode inlineText}). */
export const TAG = /<[^<>]*>/g;

/**
 * `text` cut to at most `max` characters, an ellipsis marking the cut, never inside a surrogate
 * pair. For upstream fields that are short in every real answer (titles, names, snippets), so a
 * broken upstream cannot blow up a result; long content is paged instead.
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/** A URL from an upstream, or null when it is longer than any usable link (it cannot be cut). */
export function boundedUrl(url: string | null, max = 2048): string | null {
  return url !== null && url.length <= max ? url : null;
}

/**
 * The refusal of a string argument with a lone surrogate (half of a UTF-16 pair): it is not
 * valid Unicode, and encodeURIComponent throws on it, so it can go into no URL.
 */
export const NOT_WELL_FORMED =
  "contains a lone surrogate (half of a UTF-16 pair), which is not valid Unicode text: send it again as valid UTF-8";

const isWordChar = (c: string | undefined): boolean => c !== undefined && /[\p{L}\p{N}]/u.test(c);

/**
 * Whether `hay` holds `word` where a word of it starts (both folded alike by the caller); a word
 * of three letters or fewer only whole ("og", "set" stand inside most texts' words). With
 * `inside`, a longer word may also stand inside a word (compounds: "minner" in "kulturminner").
 */
export function holdsWord(hay: string, word: string, inside = false): boolean {
  for (let at = hay.indexOf(word); at !== -1; at = hay.indexOf(word, at + 1)) {
    const starts = !isWordChar(hay[at - 1]);
    if (word.length <= 3 ? starts && !isWordChar(hay[at + word.length]) : inside || starts) return true;
  }
  return false;
}
