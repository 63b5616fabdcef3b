// The YAML parser, loaded only when a config file is read. js-yaml, not the `yaml` package the
// docs generator writes with: it loads in about 4 ms where `yaml` (CommonJS) took about 33, on a
// start that reads config/apis.yaml (deno task start in a checkout).
// @ts-types="@types/js-yaml"
import type { load as Load, Schema, Type } from "js-yaml";

let parser: ((text: string) => unknown) | undefined;

/**
 * Loads the parser; {@linkcode parseYaml} needs it. Cheap once loaded. Given the text to parse,
 * loads nothing when {@linkcode plainYaml} reads it (js-yaml's loading is 4-6 ms of a start).
 */
export async function loadYaml(text?: string): Promise<void> {
  if (parser || (text !== undefined && plainYaml(text) !== undefined)) return;
  // @ts-types="@types/js-yaml"
  const yaml = await import("js-yaml");
  const load: typeof Load = yaml.load;
  const schema = coreSchema(yaml);
  parser = (text) => load(text, { schema });
}

/** Parses YAML text; throws when {@linkcode loadYaml} has not run for text that is not plain. */
export function parseYaml(text: string): unknown {
  const plain = plainYaml(text);
  if (plain) return plain.value;
  if (!parser) throw new Error("The YAML parser is not loaded: await loadYaml() before parsing config text");
  return parser(text);
}

/** Parses YAML text with js-yaml alone (tests compare {@linkcode plainYaml} with it). */
export function parseFullYaml(text: string): unknown {
  if (!parser) throw new Error("The YAML parser is not loaded: await loadYaml() before parsing config text");
  return parser(text);
}

/**
 * Reads the plain YAML a configuration file is mostly written in, without js-yaml: block
 * mappings whose keys are plain words, block sequences of scalars, scalars plain or quoted
 * (double-quoted without escapes but \" and \\), empty `[]` and `{}`, and comments. Scalars
 * resolve as the parser's YAML 1.2 core schema resolves them. Anything else (anchors, tags, flow
 * collections, block scalars, multi-line scalars, tabs, duplicate keys, documents markers, ...)
 * gives undefined, and js-yaml reads the text, with its errors: the value is the same whenever
 * this gives one (tests/config/plain_yaml_test.ts compares the two).
 */
export function plainYaml(text: string): { value: unknown } | undefined {
  // js-yaml refuses a null byte anywhere (a comment too) and control characters in quotes.
  if (/[\t\0]/.test(text) || text.charCodeAt(0) === 0xfeff) return undefined;
  const lines: { indent: number; body: string }[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (/^ *(?:#.*)?$/.test(line)) continue;
    const body = line.trimStart();
    lines.push({ indent: line.length - body.length, body: body.trimEnd() });
  }
  if (lines.length === 0 || lines[0]!.indent !== 0) return undefined;
  const at = { i: 0 };
  const value = plainBlock(lines, at, 0);
  return value === NOT_PLAIN || at.i !== lines.length ? undefined : { value };
}

const NOT_PLAIN = Symbol("not plain");
const PLAIN_KEY = /^([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*))?$/;
const PLAIN_ITEM = /^-(?: +(.*))?$/;

/** The mapping or sequence whose lines start at `at.i`, all indented by `indent`. */
function plainBlock(
  lines: readonly { indent: number; body: string }[],
  at: { i: number },
  indent: number,
): unknown {
  const first = lines[at.i]!;
  if (PLAIN_ITEM.test(first.body)) {
    const list: unknown[] = [];
    while (at.i < lines.length && lines[at.i]!.indent === indent) {
      const item = PLAIN_ITEM.exec(lines[at.i]!.body);
      // Another key at this indentation ends a sequence written at its key's own (`key:\n- a\nnext: 1`).
      if (!item) break;
      if (item[1] === undefined) return NOT_PLAIN;
      const value = plainScalar(item[1]);
      if (value === NOT_PLAIN) return NOT_PLAIN;
      list.push(value);
      at.i++;
    }
    return at.i < lines.length && lines[at.i]!.indent > indent ? NOT_PLAIN : list;
  }
  const map: Record<string, unknown> = {};
  while (at.i < lines.length && lines[at.i]!.indent === indent) {
    const entry = PLAIN_KEY.exec(lines[at.i]!.body);
    if (!entry || Object.hasOwn(map, entry[1]!) || entry[1] === "__proto__") return NOT_PLAIN;
    at.i++;
    const rest = entry[2] === undefined || entry[2].startsWith("#") ? undefined : entry[2];
    let value: unknown;
    if (rest !== undefined) {
      value = plainScalar(rest);
    } else {
      const next = lines[at.i];
      // A nested block: deeper, or a sequence at the key's own indentation (`key:\n- a`).
      value = next && (next.indent > indent || (next.indent === indent && PLAIN_ITEM.test(next.body)))
        ? plainBlock(lines, at, next.indent)
        : null;
    }
    if (value === NOT_PLAIN) return NOT_PLAIN;
    map[entry[1]!] = value;
  }
  return at.i < lines.length && lines[at.i]!.indent > indent ? NOT_PLAIN : map;
}

/** One scalar (with its trailing comment, if any) as the core schema reads it. */
function plainScalar(text: string): unknown {
  // deno-lint-ignore no-control-regex -- js-yaml refuses control characters in quotes: they go to it
  const quoted = /^(?:"((?:[^"\\\0-\x1f]|\\["\\])*)"|'((?:[^'\0-\x1f]|'')*)')(?: +#.*)?$/.exec(text);
  if (quoted) {
    return quoted[1] !== undefined ? quoted[1].replace(/\\(["\\])/g, "$1") : quoted[2]!.replaceAll("''", "'");
  }
  const flow = /^(\[\]|\{\})(?: +#.*)?$/.exec(text);
  if (flow) return flow[1] === "[]" ? [] : {};
  // A plain scalar ends where a comment starts (" #"); it may not hold ": " or start with an
  // indicator (a "-" only before a digit or ".", as in -5).
  const plain = text.replace(/ +#.*$/, "");
  if (
    !/^(?:[A-Za-z0-9_./~+=]|-[0-9.])[A-Za-z0-9_./~+=@:, -]*$/.test(plain) || plain.includes(": ") ||
    plain.endsWith(":") || plain.includes(" #")
  ) {
    return NOT_PLAIN;
  }
  if (/^(?:~|null|Null|NULL)$/.test(plain)) return null;
  if (/^(?:true|True|TRUE)$/.test(plain)) return true;
  if (/^(?:false|False|FALSE)$/.test(plain)) return false;
  if (CORE_INT.test(plain)) return constructInt(plain);
  if (CORE_FLOAT.test(plain)) return constructFloat(plain);
  return plain;
}

// YAML 1.2's core schema, as the `yaml` package read config files before: js-yaml's own
// CORE_SCHEMA also reads `2024_06` and `0b101` as numbers (YAML 1.1 forms), so a value such as
// `project_name: 2024_06` stopped being the text it is. No dates or other tagged types either.
const CORE_INT = /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$/;
const CORE_FLOAT =
  /^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;

function constructInt(data: string): number {
  return data.startsWith("0o")
    ? parseInt(data.slice(2), 8)
    : data.startsWith("0x")
    ? parseInt(data.slice(2), 16)
    : Number(data);
}

function constructFloat(data: string): number {
  const inf = /^([-+]?)\.inf$/i.exec(data);
  if (inf) return inf[1] === "-" ? -Infinity : Infinity;
  return /^\.nan$/i.test(data) ? NaN : Number(data);
}

function coreSchema(yaml: typeof import("js-yaml")): Schema {
  const int = new yaml.Type("tag:yaml.org,2002:int", {
    kind: "scalar",
    resolve: (data: unknown) => typeof data === "string" && CORE_INT.test(data),
    construct: constructInt,
  });
  const float = new yaml.Type("tag:yaml.org,2002:float", {
    kind: "scalar",
    resolve: (data: unknown) => typeof data === "string" && CORE_FLOAT.test(data),
    construct: constructFloat,
  });
  // js-yaml's null and bool are the core schema's (`~`, `null`, `true`, `False`...); @types/js-yaml
  // leaves its `types` export out.
  const { types } = yaml as unknown as { types: Record<"null" | "bool", Type> };
  return yaml.FAILSAFE_SCHEMA.extend({ implicit: [types.null, types.bool, int, float] });
}
