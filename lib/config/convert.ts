// How the text of an environment variable or a flag becomes a config value (parse.ts, and the
// deprecated names quota.ts reads).
import { ConfigError } from "../errors.ts";
import type { ValueKind } from "./provider_spec.ts";

/** Turns a variable's or flag's text into a value of `kind`, or throws naming `source`. */
export function convert(raw: string, kind: ValueKind, source: string): unknown {
  const text = raw.trim();
  const fail = (expected: string): never => {
    throw new ConfigError(source, `Cannot parse ${source}: expected ${expected}, got ${JSON.stringify(raw)}`);
  };
  switch (kind) {
    case "string":
      return text;
    case "list":
      return text.split(",").map((s) => s.trim()).filter(Boolean);
    case "bool": {
      const lower = text.toLowerCase();
      if (["true", "1", "yes", "on"].includes(lower)) return true;
      if (["false", "0", "no", "off"].includes(lower)) return false;
      return fail("true or false");
    }
    case "int":
      return /^-?\d+$/.test(text) ? Number(text) : fail("an integer");
    case "number":
      return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : fail("a number");
    case "ms_to_s":
      return /^\d+$/.test(text) ? Number(text) / 1000 : fail("a whole number of milliseconds");
  }
}
