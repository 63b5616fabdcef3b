// The YAML parser, loaded only when a config file is read. js-yaml, not the `yaml` package the
// docs generator writes with: it loads in about 4 ms where `yaml` (CommonJS) took about 33, on a
// start that reads config/apis.yaml (deno task start in a checkout).
// @ts-types="@types/js-yaml"
import type { load as Load, Schema, Type } from "js-yaml";

let parser: ((text: string) => unknown) | undefined;

/** Loads the parser; {@linkcode parseYaml} needs it. Cheap once loaded. */
export async function loadYaml(): Promise<void> {
  if (parser) return;
  // @ts-types="@types/js-yaml"
  const yaml = await import("js-yaml");
  const load: typeof Load = yaml.load;
  const schema = coreSchema(yaml);
  parser = (text) => load(text, { schema });
}

/** Parses YAML text; throws when {@linkcode loadYaml} has not run. */
export function parseYaml(text: string): unknown {
  if (!parser) throw new Error("The YAML parser is not loaded: await loadYaml() before parsing config text");
  return parser(text);
}

// YAML 1.2's core schema, as the `yaml` package read config files before: js-yaml's own
// CORE_SCHEMA also reads `2024_06` and `0b101` as numbers (YAML 1.1 forms), so a value such as
// `project_name: 2024_06` stopped being the text it is. No dates or other tagged types either.
const CORE_INT = /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$/;
const CORE_FLOAT =
  /^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;

function coreSchema(yaml: typeof import("js-yaml")): Schema {
  const int = new yaml.Type("tag:yaml.org,2002:int", {
    kind: "scalar",
    resolve: (data: unknown) => typeof data === "string" && CORE_INT.test(data),
    construct: (data: string) =>
      data.startsWith("0o")
        ? parseInt(data.slice(2), 8)
        : data.startsWith("0x")
        ? parseInt(data.slice(2), 16)
        : Number(data),
  });
  const float = new yaml.Type("tag:yaml.org,2002:float", {
    kind: "scalar",
    resolve: (data: unknown) => typeof data === "string" && CORE_FLOAT.test(data),
    construct: (data: string) => {
      const inf = /^([-+]?)\.inf$/i.exec(data);
      if (inf) return inf[1] === "-" ? -Infinity : Infinity;
      return /^\.nan$/i.test(data) ? NaN : Number(data);
    },
  });
  // js-yaml's null and bool are the core schema's (`~`, `null`, `true`, `False`...); @types/js-yaml
  // leaves its `types` export out.
  const { types } = yaml as unknown as { types: Record<"null" | "bool", Type> };
  return yaml.FAILSAFE_SCHEMA.extend({ implicit: [types.null, types.bool, int, float] });
}
