// The YAML parser, loaded only when a config file is read: most starts read none, and loading
// the parser (a CommonJS package) costs tens of milliseconds of every start.

let parser: ((text: string) => unknown) | undefined;

/** Loads the parser; {@linkcode parseYaml} needs it. Cheap once loaded. */
export async function loadYaml(): Promise<void> {
  parser ??= (await import("yaml")).parse;
}

/** Parses YAML text; throws when {@linkcode loadYaml} has not run. */
export function parseYaml(text: string): unknown {
  if (!parser) throw new Error("The YAML parser is not loaded: await loadYaml() before parsing config text");
  return parser(text);
}
