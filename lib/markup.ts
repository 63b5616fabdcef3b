// One linear pass over HTML, for turning upstream article bodies into text. Regular expressions
// over the whole body cost a few passes each and a callback per match (a 4 MB body of "<a "
// took a second); this walk looks at each character a bounded number of times whatever the
// input, so its time grows with the body's length only, and it allocates little.

/** A tag as the walk found it. */
export interface Tag {
  /** Lower-case element name, "" for comments, declarations and other non-element tags. */
  name: string;
  closing: boolean;
  /** The text between the name and the `>` (attributes, a self-closing slash). */
  rest: string;
  /** Where the tag's `<` is and where the character after its `>` is, in the HTML. */
  start: number;
  end: number;
}

/** What {@linkcode walkMarkup} hands its findings to. */
export interface MarkupVisitor {
  /** A run of text between tags (entities not decoded, white space as it came). */
  text(run: string): void;
  tag(tag: Tag): void;
}

const NAME = /^(\/?)([a-z][a-z0-9]*)/i;
const SKIPPED: Readonly<Record<string, RegExp>> = {
  script: /<\/?script\b/gi,
  style: /<\/?style\b/gi,
};
const SKIPPED_END: Readonly<Record<string, RegExp>> = {
  script: /<\/script\s*>/iy,
  style: /<\/style\s*>/iy,
};

/**
 * Walks `html` once in document order. A `<` without a `>` before the next `<` is text (as a
 * browser shows it); `script` and `style` elements are left out with their content when their
 * end tag comes before another start tag of theirs, else only the tag is. Linear time on any
 * input: each search either moves the position forward or reuses the result of an earlier one.
 */
export function walkMarkup(html: string, visit: MarkupVisitor): void {
  // The next mention of a skipped element at or after a position: positions only move forward.
  const mentions = new Map<string, number>();
  const mention = (name: string, from: number): number => {
    const known = mentions.get(name);
    if (known !== undefined && (known === -1 || known >= from)) return known;
    const re = SKIPPED[name]!;
    re.lastIndex = from;
    const at = re.exec(html)?.index ?? -1;
    mentions.set(name, at);
    return at;
  };
  // Where the text run that the next tag ends began: a lone `<` stays part of the run.
  let from = 0;
  let lt = html.indexOf("<");
  let gt = -2;
  while (lt !== -1) {
    if (gt !== -1 && gt < lt) gt = html.indexOf(">", lt + 1);
    // No `>` after this `<`: the rest is text.
    if (gt === -1) break;
    const nextLt = html.indexOf("<", lt + 1);
    if (nextLt !== -1 && nextLt < gt) {
      lt = nextLt;
      continue;
    }
    if (lt > from) visit.text(html.slice(from, lt));
    const inner = html.slice(lt + 1, gt);
    const m = NAME.exec(inner);
    const name = m ? m[2]!.toLowerCase() : "";
    const closing = m?.[1] === "/";
    from = gt + 1;
    const skip = !closing && SKIPPED_END[name];
    const at = skip ? mention(name, from) : -1;
    if (skip && at !== -1 && ((skip.lastIndex = at), skip.test(html))) {
      from = skip.lastIndex;
    } else {
      visit.tag({ name, closing, rest: m ? inner.slice(m[0].length) : inner, start: lt, end: gt + 1 });
    }
    lt = nextLt === -1 || nextLt >= from ? nextLt : html.indexOf("<", from);
  }
  if (from < html.length) visit.text(html.slice(from));
}
