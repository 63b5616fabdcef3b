// Name checks for everything a model may put into a path: project names, file names and the
// relative paths of resource URIs. Names are refused, never silently rewritten, so a caller
// always knows the file it asked for is the file it got. Names built by the server itself
// (from series ids, dates, ...) go through `sanitizeName` instead.
import { ToolError } from "../errors.ts";

/** Device names Windows reserves, with or without an extension (`CON`, `con.csv`, `LPT1.json`). */
export const RESERVED_NAMES: ReadonlySet<string> = new Set([
  "CON",
  "PRN",
  "AUX",
  "NUL",
  ...Array.from({ length: 9 }, (_, i) => `COM${i + 1}`),
  ...Array.from({ length: 9 }, (_, i) => `LPT${i + 1}`),
]);

const PROJECT_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const FILE_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
// The characters Windows forbids in file names, plus separators, control characters and whitespace.
// deno-lint-ignore no-control-regex
const FORBIDDEN = /[<>:"|?*\\/\x00-\x1f\s]/;

function refuse(field: string, message: string, hint: string): never {
  throw new ToolError("PATH_SECURITY_ERROR", message, { field, hint });
}

function checkCommon(field: string, label: string, name: string): void {
  if (name === "") refuse(field, `The ${label} is empty`, `Give a ${label}`);
  if (name === "." || name === ".." || name.includes("..")) {
    refuse(
      field,
      `The ${label} "${name}" contains "..", which could leave the storage folder`,
      "Use a plain name",
    );
  }
  if (/[\\/]/.test(name)) {
    refuse(
      field,
      `The ${label} "${name}" contains a path separator; files are placed in folders by the server`,
      "Use a plain name without '/' or '\\'",
    );
  }
  const bad = FORBIDDEN.exec(name);
  if (bad) {
    refuse(
      field,
      `The ${label} "${name}" contains the character ${JSON.stringify(bad[0])}, which is not allowed`,
      "Use letters, digits, '-' and '_' (and '.' before an extension)",
    );
  }
  const stem = name.split(".")[0]!.toUpperCase();
  if (RESERVED_NAMES.has(stem)) {
    refuse(field, `The ${label} "${name}" is a reserved device name on Windows`, "Choose another name");
  }
}

/** Checks a project name (letters, digits, `-`, `_`; 1-64 characters) and returns it. */
export function checkProjectName(name: string, field = "project"): string {
  checkCommon(field, "project name", name);
  if (!PROJECT_RE.test(name)) {
    refuse(
      field,
      `The project name "${name}" is not allowed: use 1-64 letters, digits, '-' or '_', starting with a letter or digit`,
      'For example "inflation-study"',
    );
  }
  return name;
}

/**
 * Checks a caller's file name and returns it with the extension of `format` (added when
 * missing). Another extension is refused rather than replaced.
 */
export function checkFilename(name: string, format: string, field = "filename"): string {
  checkCommon(field, "filename", name);
  if (!FILE_RE.test(name) || name.endsWith(".")) {
    refuse(
      field,
      `The filename "${name}" is not allowed: use up to 128 letters, digits, '.', '-' or '_', starting with a letter or digit`,
      'For example "gdp_quarterly"',
    );
  }
  const ext = `.${format}`;
  const dot = name.lastIndexOf(".");
  if (dot > 0) {
    const given = name.slice(dot).toLowerCase();
    // The extension is written in lower case: listings and resources/read take the format from it.
    if (given === ext) return `${name.slice(0, dot)}${ext}`;
    if (/^\.[a-z0-9]{1,5}$/.test(given)) {
      refuse(
        field,
        `The filename "${name}" ends in "${given}" but the file is written as ${format}`,
        `Drop the extension or use "${name.slice(0, dot)}${ext}"`,
      );
    }
  }
  return `${name}${ext}`;
}

/**
 * Checks a relative path taken from a resource URI (already percent-decoded), such as
 * `series/GNPCA_observations.csv`, and returns its segments. No segment may be empty, hidden
 * (leading dot), `..` or otherwise unsafe; at most `maxDepth` segments.
 */
export function checkRelativePath(path: string, maxDepth = 2, field = "path"): string[] {
  const segments = path.split("/");
  if (segments.length > maxDepth) {
    refuse(
      field,
      `The path "${path}" is deeper than ${maxDepth} levels`,
      "Use a path that fred_project_files lists",
    );
  }
  for (const segment of segments) {
    if (segment.startsWith(".") && segment !== "." && segment !== "..") {
      refuse(
        field,
        `The path "${path}" names a hidden file`,
        "Use a path that the project's file list shows",
      );
    }
    checkCommon(field, "path segment", segment);
    if (!FILE_RE.test(segment)) {
      refuse(field, `The path "${path}" contains the unsafe segment "${segment}"`, "Use a listed path");
    }
  }
  return segments;
}

/** Reduces free text to a safe name part: letters, digits, `-` and `_`, at most `max` characters. */
export function sanitizeName(text: string, max = 80): string {
  return text
    .replace(/[^A-Za-z0-9_-]+/g, "_")
    .replace(/_+/g, "_")
    .replace(/^[_-]+|[_-]+$/g, "")
    .slice(0, max)
    .replace(/[_-]+$/, "");
}

/**
 * Fills a file name pattern such as `{series_id}_{operation}_{date}_{time}`. Unknown or empty
 * variables become nothing, every value is sanitized, and the result is never empty.
 */
export function renderFilenamePattern(pattern: string, vars: Record<string, string | undefined>): string {
  const filled = pattern.replace(/\{([a-z_]+)\}/g, (_, name: string) => sanitizeName(vars[name] ?? ""));
  const name = sanitizeName(filled, 120);
  if (name === "" || RESERVED_NAMES.has(name.toUpperCase())) {
    return sanitizeName(`data_${vars["timestamp"] ?? "file"}`);
  }
  return name;
}

/** `YYYYMMDD` and `HHMMSS` of `ms` in UTC, for file names and job ids. */
export function stamp(ms: number): { date: string; time: string } {
  const iso = new Date(ms).toISOString();
  return { date: iso.slice(0, 10).replaceAll("-", ""), time: iso.slice(11, 19).replaceAll(":", "") };
}

/** The folder of the result files (`output: "file"`) under the data folder. */
export function exportsRoot(dataDir: string): string {
  return `${dataDir.replace(/[\\/]+$/, "")}/exports`;
}
