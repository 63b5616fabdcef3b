import { z } from "zod";
import { ConfigError } from "../errors.ts";
import { parseYaml } from "./yaml.ts";
import { plainSettings } from "./provider_spec.ts";
import type { Binding, CommonSettings, ProviderSpec } from "./provider_spec.ts";
import type { ServerSettings } from "./server_settings.ts";
import { SERVER_DEFAULTS, serverSchema } from "./server_schema.ts";
import { OTHER_ENV, SERVER_ENV, SERVER_FLAGS } from "./server_env.ts";
import { convert } from "./convert.ts";
import { deprecatedEnvNames, resolveQuota, takeMovedSettings, takeServerAliases } from "./quota.ts";
import type { AliasValue } from "./quota.ts";

export type { ServerSettings } from "./server_settings.ts";
export { SERVER_DEFAULTS, serverSchema } from "./server_schema.ts";
export { OTHER_ENV, SERVER_ENV, SERVER_FLAGS } from "./server_env.ts";
export { convert } from "./convert.ts";

/** The whole validated configuration. */
export interface Config {
  enabledProviders: string[];
  /** Blocks of the enabled providers, validated by their specs. */
  providers: Record<string, CommonSettings & Record<string, unknown>>;
  server: ServerSettings;
  tools: { include: string[]; exclude: string[] };
  /**
   * The toolsets listed (besides `core`, always listed): ids, or `all`. Default `["core"]`, or
   * `["all"]` when `tools.include` names tools. Checked against the providers when the app starts.
   */
  toolsets: string[];
  /** Where the toolset selection came from, for error messages. */
  toolsetsFrom: string;
  /** Things worth telling the user that did not stop the server. */
  warnings: string[];
  /** The config file read, or null for built-in defaults. */
  file: string | null;
}

/** The raw inputs of {@linkcode parseConfig}. */
export interface ConfigInput {
  /** Parsed command-line flags by long name (`providers`, `boj-timeout-ms`, ...). */
  flags: Record<string, string | boolean | undefined>;
  env: Record<string, string | undefined>;
  /** The config file's text, when one is read (parsed with the YAML parser `loadYaml()` loads). */
  fileText?: string;
  filePath?: string;
}

function buildFileSchema() {
  return z.strictObject({
    enabled_providers: z.array(z.string()).optional(),
    toolsets: z.array(z.string()).optional(),
    server: z.record(z.string(), z.unknown()).optional(),
    tools: z.strictObject({
      include: z.array(z.string()).optional(),
      exclude: z.array(z.string()).optional(),
    }).optional(),
    providers: z.record(z.string(), z.record(z.string(), z.unknown()).nullable()).optional(),
  });
}

let builtFileSchema: ReturnType<typeof buildFileSchema> | undefined;

/**
 * Builds the configuration from flags, environment and config file text, in that precedence,
 * over built-in defaults. Pure: throws {@linkcode ConfigError} naming the key at fault.
 */
export function parseConfig(input: ConfigInput, specs: readonly ProviderSpec[]): Config {
  const warnings: string[] = [];
  const fileLabel = input.filePath ? `config file ${input.filePath}` : "config file";
  const file = readFile(input.fileText, fileLabel);

  const fileServer = { ...file.server };
  const aliases: AliasValue[] = takeServerAliases(fileServer, input.env, fileLabel);
  const serverLayers = [
    {
      values: Object.fromEntries(
        Object.entries(fileServer).map(([k, v]) => [k, normalizeServerValue(k, v)]),
      ),
      origin: (k: string) => `server.${k} in the ${fileLabel}`,
    },
    envLayer(SERVER_ENV, input.env, normalizeServerValue),
    flagLayer(SERVER_FLAGS, input.flags, normalizeServerValue),
  ];
  const server = layered(
    serverSchema,
    "server",
    serverLayers,
    () => structuredClone(SERVER_DEFAULTS) as ServerSettings,
  );

  const known = new Map(specs.map((s) => [s.id, s]));
  for (const id of Object.keys(file.providers ?? {})) {
    // A provider that is not there is skipped with a warning, not a reason to stop
    // (docs/CONFIGURATION.md, "Rules").
    if (!known.has(id)) {
      warnings.push(
        `Unknown provider "${id}" under "providers" in the ${fileLabel} was ignored; known providers: ${
          [...known.keys()].join(", ")
        }`,
      );
    }
  }

  const listed = listValue(input.flags["providers"]) ??
    listValue(input.env["OPENDATA_MCP_PROVIDERS"]) ??
    file.enabled_providers ??
    specs.filter((s) => s.defaultEnabled).map((s) => s.id);
  const enabled: string[] = [];
  for (const id of listed) {
    if (!known.has(id)) {
      warnings.push(
        `Unknown provider "${id}" in the enabled providers was skipped; known providers: ${
          [...known.keys()].join(", ")
        }`,
      );
    } else if (!enabled.includes(id)) {
      enabled.push(id);
    }
  }

  const providers: Config["providers"] = {};
  for (const spec of specs) {
    const isEnabled = enabled.includes(spec.id);
    const block = { ...file.providers?.[spec.id] };
    aliases.push(...takeMovedSettings(spec, block, input.env, isEnabled, fileLabel));
    const layers: Layer[] = [{
      values: block,
      origin: (k) => `providers.${spec.id}.${k} in the ${fileLabel}`,
    }];
    if (isEnabled) {
      const defaultTimeout = input.env[spec.defaultTimeoutEnv] ?? input.env["DEFAULT_TIMEOUT"];
      const envName = input.env[spec.defaultTimeoutEnv] !== undefined
        ? spec.defaultTimeoutEnv
        : "DEFAULT_TIMEOUT";
      if (defaultTimeout !== undefined && defaultTimeout !== "" && block["timeout"] === undefined) {
        layers.unshift({
          values: { timeout: convert(defaultTimeout, "number", envName) },
          origin: () => envName,
        });
      }
      layers.push(envLayer(spec.env, input.env), flagLayer(spec.flags, input.flags));
    }
    const generated = spec.listings?.defaults;
    const settings = layered(
      () => spec.schema,
      `providers.${spec.id}`,
      layers,
      // Nothing set for the provider: the defaults its listings were generated with.
      generated ? () => structuredClone(generated) as unknown as CommonSettings : undefined,
      // Plain values set: checked without building the block's schema.
      generated
        ? (values) => plainSettings(spec, generated, values) as unknown as CommonSettings | undefined
        : undefined,
    ) as CommonSettings & Record<string, unknown>;
    if (isEnabled) {
      providers[spec.id] = settings;
    }
  }

  const explicit = new Set(serverLayers.flatMap((l) => Object.keys(l.values)));
  resolveQuota(server, explicit, aliases, warnings);

  const tools = {
    include: listValue(input.flags["tools"]) ?? file.tools?.include ?? [],
    exclude: listValue(input.flags["exclude-tools"]) ?? file.tools?.exclude ?? [],
  };
  return {
    enabledProviders: enabled,
    providers,
    server,
    tools,
    ...toolsetChoice(input, file.toolsets, tools.include, fileLabel),
    warnings,
    file: input.filePath ?? null,
  };
}

/**
 * The toolsets listed: the flag, then the environment, then the file's `toolsets:`; by default
 * the core toolset alone, or every toolset when `--tools` names tools (naming them asks for them).
 */
function toolsetChoice(
  input: ConfigInput,
  fromFile: string[] | undefined,
  include: readonly string[],
  fileLabel: string,
): { toolsets: string[]; toolsetsFrom: string } {
  const flag = listValue(input.flags["toolsets"]);
  if (flag) return { toolsets: flag, toolsetsFrom: "--toolsets" };
  const env = listValue(input.env["OPENDATA_MCP_TOOLSETS"]);
  if (env) return { toolsets: env, toolsetsFrom: "OPENDATA_MCP_TOOLSETS" };
  if (fromFile) return { toolsets: fromFile, toolsetsFrom: `toolsets in the ${fileLabel}` };
  return include.length
    ? { toolsets: ["all"], toolsetsFrom: "--tools" }
    : { toolsets: ["core"], toolsetsFrom: "the default" };
}

/** The configuration as `config check` prints it: every secret replaced by `***`. */
export function redactConfig(config: Config, specs: readonly ProviderSpec[]): Record<string, unknown> {
  const providers: Record<string, unknown> = {};
  for (const [id, block] of Object.entries(config.providers)) {
    const spec = specs.find((s) => s.id === id);
    const copy: Record<string, unknown> = { ...block };
    for (const key of spec?.secrets ?? []) {
      if (copy[key] !== null && copy[key] !== undefined && copy[key] !== "") copy[key] = "***";
    }
    providers[id] = copy;
  }
  return {
    file: config.file ?? "(none: built-in defaults)",
    enabled_providers: config.enabledProviders,
    server: {
      ...config.server,
      auth_token: config.server.auth_token ? "***" : null,
      oauth_client_secret: config.server.oauth_client_secret ? "***" : null,
      request_state_key: config.server.request_state_key ? "***" : null,
      metrics_token: config.server.metrics_token ? "***" : null,
      redis_url: config.server.redis_url ? redactRedisUrl(config.server.redis_url) : null,
    },
    tools: config.tools,
    providers,
    warnings: config.warnings,
  };
}

/** Every secret value in the configuration, for the logger to mask. */
export function configSecrets(config: Config, specs: readonly ProviderSpec[]): string[] {
  const out: string[] = [];
  if (config.server.auth_token) out.push(config.server.auth_token);
  if (config.server.oauth_client_secret) out.push(config.server.oauth_client_secret);
  if (config.server.request_state_key) out.push(config.server.request_state_key);
  if (config.server.metrics_token) out.push(config.server.metrics_token);
  const redisPassword = redisPasswordOf(config.server.redis_url);
  if (redisPassword) out.push(redisPassword);
  for (const [id, block] of Object.entries(config.providers)) {
    for (const key of specs.find((s) => s.id === id)?.secrets ?? []) {
      const value = block[key];
      if (typeof value === "string" && value) out.push(value);
    }
  }
  return out;
}

/** The password in a Redis URL, if any (decoded as the client sends it). */
function redisPasswordOf(url: string | null): string | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    return u.password ? decodeURIComponent(u.password) : undefined;
  } catch {
    return undefined;
  }
}

function redactRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "***";
  }
}

interface Layer {
  values: Record<string, unknown>;
  origin: (key: string) => string;
}

function readFile(text: string | undefined, label: string): z.output<ReturnType<typeof buildFileSchema>> {
  if (text === undefined || text.trim() === "") return {};
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    const detail = e instanceof Error ? e.message.split("\n")[0] : String(e);
    throw new ConfigError("<file>", `Cannot parse the ${label} as YAML: ${detail}`);
  }
  if (raw === null || raw === undefined) return {};
  const plain = plainFile(raw);
  if (plain) return plain;
  const result = (builtFileSchema ??= buildFileSchema()).safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    if (issue.code === "unrecognized_keys") {
      const path = [...issue.path.map(String), issue.keys[0]].join(".");
      throw new ConfigError(
        path,
        `Unknown key "${path}" in the ${label}; allowed at the top level: enabled_providers, server, tools, providers`,
      );
    }
    const path = issue.path.map(String).join(".") || "<file>";
    throw new ConfigError(path, `Invalid "${path}" in the ${label}: ${issue.message}`);
  }
  return result.data;
}

type FileContents = z.output<ReturnType<typeof buildFileSchema>>;

const FILE_KEYS = new Set(["enabled_providers", "toolsets", "server", "tools", "providers"]);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype &&
    !Object.hasOwn(v, "__proto__");
}

function isStringList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === "string");
}

/**
 * The config file's contents as the file schema gives them, checked without building it, when
 * the file is plainly of the expected shape (what YAML gives: plain objects, arrays of strings);
 * undefined otherwise, and the schema says what is wrong.
 */
function plainFile(raw: unknown): FileContents | undefined {
  if (!isRecord(raw)) return undefined;
  const out: FileContents = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!FILE_KEYS.has(key)) return undefined;
    if (key === "enabled_providers" || key === "toolsets") {
      if (!isStringList(value)) return undefined;
      out[key] = [...value];
    } else if (key === "server") {
      if (!isRecord(value)) return undefined;
      out.server = { ...value };
    } else if (key === "tools") {
      if (!isRecord(value)) return undefined;
      const tools: NonNullable<FileContents["tools"]> = {};
      for (const [k, list] of Object.entries(value)) {
        if ((k !== "include" && k !== "exclude") || !isStringList(list)) return undefined;
        tools[k] = [...list];
      }
      out.tools = tools;
    } else {
      if (!isRecord(value)) return undefined;
      const providers: NonNullable<FileContents["providers"]> = {};
      for (const [id, block] of Object.entries(value)) {
        if (block !== null && !isRecord(block)) return undefined;
        providers[id] = block === null ? null : { ...block };
      }
      out.providers = providers;
    }
  }
  return out;
}

/**
 * The settings `layers` make, validated by the schema `schemaOf` returns. When no layer sets
 * anything and `defaults` is given, its result is used and the schema is not built (zod schemas
 * cost start-up time); nor is it when `plain` gives the settings (undefined: let the schema say).
 */
function layered<T>(
  schemaOf: () => z.ZodType<T>,
  prefix: string,
  layers: readonly Layer[],
  defaults?: () => T,
  plain?: (values: Record<string, unknown>) => T | undefined,
): T {
  const merged: Record<string, unknown> = {};
  const origins: Record<string, string> = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer.values)) {
      if (value === undefined) continue;
      merged[key] = value;
      origins[key] = layer.origin(key);
    }
  }
  if (defaults && Object.keys(merged).length === 0) return defaults();
  const quick = plain?.(merged);
  if (quick !== undefined) return quick;
  const schema = schemaOf();
  // One parse per start: zod's compiled fast path would cost more to build than it saves.
  const result = schema.safeParse(merged, { jitless: true });
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0]!;
    const allowed = schema instanceof z.ZodObject ? Object.keys(schema.shape).join(", ") : "";
    throw new ConfigError(
      `${prefix}.${key}`,
      `Unknown key "${prefix}.${key}" (${origins[key] ?? "config"}); allowed keys: ${allowed}`,
    );
  }
  const key = String(issue.path[0] ?? "");
  const path = key ? `${prefix}.${key}` : prefix;
  const got = key in merged ? ` got ${JSON.stringify(merged[key])}` : "";
  throw new ConfigError(
    path,
    `Invalid "${path}" (${origins[key] ?? "default"}): ${issue.message};${got}`.replace(/;$/, ""),
  );
}

function envLayer(
  bindings: readonly Binding[],
  env: Record<string, string | undefined>,
  normalize: (key: string, v: unknown) => unknown = (_k, v) => v,
): Layer {
  const values: Record<string, unknown> = {};
  const origins: Record<string, string> = {};
  for (const b of bindings) {
    const raw = env[b.name];
    // An empty variable counts as unset, as in .env files with blank values.
    if (raw === undefined || raw === "") continue;
    values[b.key] = normalize(b.key, convert(raw, b.kind, b.name));
    origins[b.key] = `environment variable ${b.name}`;
  }
  return { values, origin: (k) => origins[k] ?? "environment" };
}

function flagLayer(
  bindings: readonly Binding[],
  flags: Record<string, string | boolean | undefined>,
  normalize: (key: string, v: unknown) => unknown = (_k, v) => v,
): Layer {
  const values: Record<string, unknown> = {};
  const origins: Record<string, string> = {};
  for (const b of bindings) {
    const raw = flags[b.name];
    if (raw === undefined) continue;
    values[b.key] = normalize(
      b.key,
      typeof raw === "boolean" ? raw : convert(raw, b.kind, `--${b.name}`),
    );
    origins[b.key] = `flag --${b.name}`;
  }
  return { values, origin: (k) => origins[k] ?? "flags" };
}

function normalizeServerValue(key: string, value: unknown): unknown {
  if (key === "log_level" && typeof value === "string") {
    const lower = value.toLowerCase();
    return lower === "warning" ? "warn" : lower;
  }
  if (
    (key === "transport" || key === "log_format" || key === "writes" || key === "structured_content" ||
      key === "resource_links") &&
    typeof value === "string"
  ) {
    return value.toLowerCase();
  }
  return value;
}

function listValue(value: unknown): string[] | undefined {
  if (typeof value !== "string" || value.trim() === "") return undefined;
  return value.split(",").map((s) => s.trim()).filter(Boolean);
}

/** Variables that locate the per-user config and data folders. */
export const PATH_ENV: readonly string[] = [
  "HOME",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "APPDATA",
  "LOCALAPPDATA",
];

/** Every environment variable the server reads (the `--allow-env` list). */
export function knownEnvNames(specs: readonly ProviderSpec[]): string[] {
  const names = [
    ...PATH_ENV,
    ...OTHER_ENV.map((e) => e.name),
    ...SERVER_ENV.map((b) => b.name),
    ...specs.flatMap((s) => [s.defaultTimeoutEnv, ...s.env.map((b) => b.name)]),
    // Old names still read, with a deprecation warning (quota.ts).
    ...deprecatedEnvNames(specs),
  ];
  return [...new Set(names)];
}
