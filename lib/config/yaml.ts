// The YAML parser, loaded only when a config file is read. js-yaml, not the `yaml` package the
// docs generator writes with: it loads in about 4 ms where `yaml` (CommonJS) took about 33, on a
// start that reads config/apis.yaml (deno task start in a checkout).
// @ts-types="@types/js-yaml"
import type { load as Load } from "js-yaml";

let parser: ((text: string) => unknown) | undefined;

/** Loads the parser; {@linkcode parseYaml} needs it. Cheap once loaded. */
export async function loadYaml(): Promise<void> {
  if (parser) return;
  // @ts-types="@types/js-yaml"
  const yaml = await import("js-yaml");
  const load: typeof Load = yaml.load;
  // YAML 1.2's core schema (null, booleans, numbers, strings): no dates or other tagged types
  // in a config file, as the `yaml` package parsed it before.
  parser = (text) => load(text, { schema: yaml.CORE_SCHEMA });
}

/** Parses YAML text; throws when {@linkcode loadYaml} has not run. */
export function parseYaml(text: string): unknown {
  if (!parser) throw new Error("The YAML parser is not loaded: await loadYaml() before parsing config text");
  return parser(text);
}
