// The forms in which a hostile or careless upstream echoes an API key back (docs/SECURITY.md,
// "Secrets"), and a detector of them written apart from lib/secrets.ts, so the masker is not
// judged by itself. Shared by the end-to-end tests and the hostile run (tools/bench/hostile_secrets.ts).

/** One echo of a key: what the upstream sends, and what must never appear in an output. */
export interface SecretForm {
  name: string;
  /** The text the upstream puts into a title, a note, a date or a value. */
  echo: string;
  /** The part of `echo` that gives the key away (the stable base64 characters, for base64). */
  probe: string;
}

const ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"];

/** The key in every form the masker covers: 17 of them. */
export function secretForms(key: string): SecretForm[] {
  const chars = [...key];
  const bytes = new TextEncoder().encode(key);
  const b64 = (prefix: string) => btoa(prefix + key);
  const stable = (prefix: string) => {
    const from = Math.ceil(prefix.length * 8 / 6);
    const to = Math.floor((prefix.length + key.length) * 8 / 6);
    return b64(prefix).slice(from, to);
  };
  const urlSafe = (s: string) => s.replaceAll("+", "-").replaceAll("/", "_");
  const forms: [string, string, string?][] = [
    ["verbatim", key],
    ["upper case", key.toUpperCase()],
    ["zero-width spaces", chars.join("\u200b")],
    ["mixed zero-width characters", chars.map((c, i) => `${c}${ZERO_WIDTH[i % ZERO_WIDTH.length]}`).join("")],
    ["soft hyphens", chars.join("\u00ad")],
    ["dashes in groups", key.match(/.{1,4}/g)!.join("-")],
    ["spaces, dots and underscores", chars.map((c, i) => `${c}${[" ", ".", "_"][i % 3]}`).join("")],
    ["percent-encoded", chars.map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, "0")}`).join("")],
    ["HTML entities", chars.map((c) => `&#${c.charCodeAt(0)};`).join("")],
    ["JSON escapes", chars.map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")],
    ["base64", b64(""), stable("")],
    ["base64 after one byte", b64("k"), stable("k")],
    ["url-safe base64 after two bytes", urlSafe(b64("k=")), urlSafe(stable("k="))],
    ["hex of the bytes", [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")],
    ["the 24-character tail", key.slice(-24)],
    ["the 16-character head", key.slice(0, 16)],
    ["a 20-character middle in upper case", key.slice(6, 26).toUpperCase()],
  ];
  return forms.map(([name, echo, probe]) => ({ name, echo, probe: probe ?? echo }));
}

/** Characters the split forms put between a key's characters. */
const GAPS = /[\s\u200b-\u200d\u2060\ufeff\u00ad._+-]/g;

/**
 * The names of the forms of `key` found in `text`: each form's probe verbatim, and any 16
 * characters of the key once separators and case are taken out of the text.
 */
export function leakedForms(text: string, key: string): string[] {
  const found = secretForms(key).filter((f) => text.includes(f.probe)).map((f) => f.name);
  const squeezed = text.replace(GAPS, "").toLowerCase();
  const lower = key.toLowerCase();
  for (let i = 0; i + 16 <= lower.length; i++) {
    if (squeezed.includes(lower.slice(i, i + 16))) {
      found.push(`16 characters of the key from ${i}`);
      break;
    }
  }
  return found;
}
