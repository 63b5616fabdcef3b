// snl-article's parts (tools/article.ts): an article's text is read a part at a time, each part
// cut at a paragraph, line, sentence or word boundary and fitted with its lists to the limit.

import { partEnd } from "../../mcp/shaping.ts";

/** How many authors, images and links a part shows. */
export interface Lists {
  authors: number;
  images: number;
  links: number;
}

/** The larger of a rendering's text and its serialized structured content. */
function size(r: { text: string; structured: unknown }): number {
  return Math.max(r.text.length, JSON.stringify(r.structured).length);
}

/**
 * Shortens the lists around the text (images first, then links, then authors, keeping one) until
 * a part without text takes at most two thirds of the limit, so every part carries text.
 */
export function fitLists(
  all: Lists,
  limit: number,
  render: (lists: Lists) => { text: string; structured: unknown },
): Lists {
  const room = Math.floor(limit * 2 / 3);
  let k = { ...all };
  for (const key of ["images", "links", "authors"] as const) {
    if (size(render(k)) <= room) break;
    const min = key === "authors" ? Math.min(1, all.authors) : 0;
    let lo = min;
    let hi = all[key];
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (size(render({ ...k, [key]: mid })) <= room) lo = mid;
      else hi = mid - 1;
    }
    k = { ...k, [key]: lo };
  }
  return k;
}

/** The longest part from `start`, cut at a boundary, whose rendering fits `limit` in both formats. */
export function fitPart<S>(
  text: string,
  start: number,
  maxChars: number | undefined,
  limit: number,
  render: (end: number) => { text: string; structured: S },
): { text: string; structured: S } {
  let max = Math.min(maxChars ?? limit, limit);
  for (let i = 0; i < 16; i++) {
    const end = partEnd(text, start, text.length, Math.max(1, max));
    const r = render(end);
    const over = size(r) - limit;
    if (over <= 0) return r;
    max = end - start - over - 32;
    if (max < 1) break;
  }
  return render(start);
}
