// A whole article as plain text (TextExtracts with exsectionformat=wiki marks headings as
// "== Title =="), turned into markdown headings plus an outline of character offsets, and cut
// into parts that end at paragraph or line boundaries.

/** One section of the article text. */
export interface Section {
  /** 0 is the lead; headings count from 1 in document order. */
  index: number;
  title: string;
  /** 1 for the lead, else the heading level (2 for "== x ==", 3 for "=== x ===", ...). */
  level: number;
  /** Character offset of the section's first character (its heading line) in the text. */
  offset: number;
  /** Characters in the section, heading included. */
  chars: number;
}

/** The article text and its outline. */
export interface ArticleText {
  text: string;
  sections: Section[];
}

/**
 * A heading line ("== Title ==", the same run of 2 to 6 "=" at both ends): its level and title.
 * Read by hand because the pattern `^(={2,6})\s*(.*?)\s*\1\s*$` backtracks without end on
 * a line of "==" and spaces (5,000 spaces took 92 s); this is linear in the line.
 */
export function headingOf(line: string): { level: number; title: string } | null {
  let lead = 0;
  while (lead < 6 && line.charCodeAt(lead) === 61) lead++;
  if (lead < 2) return null;
  const end = line.trimEnd();
  for (let n = lead; n >= 2; n--) {
    if (end.length < 2 * n || !end.endsWith("=".repeat(n))) continue;
    const title = end.slice(n, end.length - n).trim();
    if (title) return { level: n, title };
  }
  return null;
}

/** Builds the markdown text and the outline from a plain-text extract. */
export function articleText(extract: string): ArticleText {
  const lines = extract.replace(/\r\n?/g, "\n").split("\n");
  const out: string[] = [];
  const starts: { title: string; level: number; line: number }[] = [];
  for (const line of lines) {
    const h = headingOf(line);
    if (h) {
      // A heading starts a new paragraph even if the extract put no blank line before it.
      if (out.length && out[out.length - 1] !== "") out.push("");
      starts.push({ title: h.title, level: h.level, line: out.length });
      out.push(`${"#".repeat(h.level)} ${h.title}`);
    } else {
      out.push(line.trimEnd());
    }
  }
  // Collapse runs of blank lines, keeping track of where each heading line ends up.
  const kept: string[] = [];
  const lineMap = new Map<number, number>();
  for (let i = 0; i < out.length; i++) {
    const line = out[i]!;
    if (line === "" && (kept.length === 0 || kept[kept.length - 1] === "")) continue;
    lineMap.set(i, kept.length);
    kept.push(line);
  }
  while (kept.length && kept[kept.length - 1] === "") kept.pop();
  const text = kept.join("\n");
  const lineOffsets: number[] = [];
  let pos = 0;
  for (const line of kept) {
    lineOffsets.push(pos);
    pos += line.length + 1;
  }
  const sections: Section[] = [{ index: 0, title: "(lead)", level: 1, offset: 0, chars: 0 }];
  starts.forEach((s, i) => {
    const line = lineMap.get(s.line);
    const offset = line === undefined ? text.length : lineOffsets[line] ?? text.length;
    sections.push({ index: i + 1, title: s.title, level: s.level, offset, chars: 0 });
  });
  for (let i = 0; i < sections.length; i++) {
    const end = sections[i + 1]?.offset ?? text.length;
    sections[i]!.chars = Math.max(0, end - sections[i]!.offset);
  }
  return { text, sections };
}

// The part boundaries every long text shares live in the core (lib/mcp/shaping.ts).
export { partEnd as cutPoint, safeIndex } from "../../mcp/shaping.ts";

/** The section that contains character `offset`. */
export function sectionAt(sections: readonly Section[], offset: number): Section {
  let found = sections[0]!;
  for (const s of sections) if (s.offset <= offset) found = s;
  return found;
}
