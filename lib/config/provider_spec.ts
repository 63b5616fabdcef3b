import { z } from "zod";
import type { ProviderListings } from "../mcp/listing.ts";
import type { ProviderModule } from "../mcp/provider.ts";
import type { CommonSettings } from "../http/settings.ts";

export type { CommonSettings } from "../http/settings.ts";

/** How a raw environment or flag string becomes a config value. */
export type ValueKind =
  | "string"
  | "int"
  | "number"
  | "bool"
  | "list"
  /** Milliseconds in the variable, seconds in the config (`BOJ_TIMEOUT_MS` -> `timeout`). */
  | "ms_to_s";

/** One environment variable or flag that sets a key of a provider block. */
export interface Binding {
  /** `BOJ_TIMEOUT_MS` for an environment variable, `boj-timeout-ms` for a flag. */
  name: string;
  /** The key in the provider block it sets. */
  key: string;
  kind: ValueKind;
  /** What it means, for `--help`, the README and `.env.example`. */
  description: string;
}

/**
 * A provider setting that became a server setting: still read under its old key and variable
 * when the provider is enabled, as a deprecated alias of the server key (lib/config/quota.ts).
 */
export interface MovedSetting {
  /** The old key in the provider block (`max_projects_per_client`). */
  key: string;
  /** The old environment variable (`FRED_MAX_PROJECTS_PER_CLIENT`). */
  env: string;
  kind: ValueKind;
  /** The server key it sets now (`quota_projects`). */
  to: string;
}

/** Defaults for the common keys; `base_url` is required. */
export type CommonDefaults = Partial<CommonSettings> & { base_url: string };

const COMMON_FALLBACK: Omit<CommonSettings, "base_url"> = {
  timeout: 30,
  max_retries: 3,
  retry_backoff_ms: 500,
  cache_ttl: 300,
  rate_limit_per_minute: 0,
  rate_limit_per_second: 0,
  breaker_threshold: 5,
  breaker_cooldown: 60,
  max_body_mb: 16,
};

/** What a provider tells the core before its code is loaded: config, variables, hosts. */
export interface ProviderSpec<S extends CommonSettings = CommonSettings> {
  id: string;
  title: string;
  /** One line for `--help`, the README and `GET /`. */
  description: string;
  /** Served when no provider list is given. Test-only providers say false. */
  defaultEnabled: boolean;
  /** Left out of the README, the generated config reference and `.env.example` (test-only providers). */
  hidden: boolean;
  /** The block's strict schema, every key with a default. */
  schema: z.ZodType<S>;
  /** Default values, for docs and `config/apis.example.yaml`. */
  defaults: Record<string, unknown>;
  env: readonly Binding[];
  flags: readonly Binding[];
  /** Keys whose values are secrets (masked in `config check`, logs and errors). */
  secrets: readonly string[];
  /** Old keys and variables now read as server settings (deprecated aliases). */
  moved: readonly MovedSetting[];
  /** Environment variable that replaces the built-in default timeout (`DEFAULT_TIMEOUT`, docs/CONFIGURATION.md). */
  defaultTimeoutEnv: string;
  /** Host names (with port when not default) the provider connects to, for the allowlist check. */
  hosts(settings: S): string[];
  /** `--allow-net` entries the default settings need (wildcards allowed: `*.wikipedia.org`). */
  allowNet: readonly string[];
  /** Loads the provider's code (a literal dynamic import, so `deno compile` bundles it). */
  load(): Promise<ProviderModule<S>>;
  /**
   * Warnings about the settings for the start-up log (e.g. a key that looks wrong), made
   * without loading the provider's code.
   */
  check?(settings: S): string[];
  /**
   * What the provider serves, from the generated listings (`deno task schemas`): with them the
   * server lists its tools without loading its code, and loads it on first use.
   */
  listings?: ProviderListings;
  /** Common keys the provider's own keys redeclare with a schema of their own (wikipedia: `base_url`). */
  replaces: readonly string[];
  /** Own keys checked as plain code at start-up, without building the schema (see {@linkcode plainSettings}). */
  plain?: Readonly<Record<string, (value: unknown) => boolean>>;
  /**
   * Folders the provider keeps clients' projects in: counted towards the quota and reclaimed
   * when stale from start-up on, before its code is loaded (lib/output/storage_upkeep.ts).
   */
  storageRoots?(settings: S, dataDir: string): string[];
}

/** Options for {@linkcode defineProvider}. */
export interface DefineProviderOptions<E extends z.ZodRawShape> {
  id: string;
  title: string;
  description: string;
  defaultEnabled?: boolean;
  hidden?: boolean;
  common: CommonDefaults;
  /**
   * Provider-specific keys, each with a default and a `.describe()`; as a function, called when
   * the schema is first built (not on every start).
   */
  extra?: E | (() => E);
  /**
   * Common keys `extra` redeclares (they replace the common schema). Start-up checks the common
   * keys a configuration sets without building zod schemas, so it must know which ones are not
   * the common ones (tests/config/provider_spec_test.ts keeps this list equal to `extra`'s keys).
   */
  replaces?: readonly (keyof CommonSettings)[];
  /**
   * Own keys a configuration often sets (an API key), checked as plain code at start-up: each
   * check accepts only values the key's schema in `extra` accepts and leaves unchanged, so that
   * setting them does not build the block's schema (tests/config/plain_settings_test.ts compares
   * them with the schema). Any other value goes to the schema, whose error names the key.
   */
  plain?: Readonly<Record<string, (value: unknown) => boolean>>;
  env?: readonly Binding[];
  flags?: readonly Binding[];
  secrets?: readonly string[];
  moved?: readonly MovedSetting[];
  defaultTimeoutEnv?: string;
  hosts?: (settings: CommonSettings & z.output<z.ZodObject<E>>) => string[];
  /** Default: the host of the default `base_url`. */
  allowNet?: readonly string[];
  load: () => Promise<ProviderModule<CommonSettings & z.output<z.ZodObject<E>>>>;
  check?: (settings: CommonSettings & z.output<z.ZodObject<E>>) => string[];
  /** See {@linkcode ProviderSpec.storageRoots}. */
  storageRoots?: (settings: CommonSettings & z.output<z.ZodObject<E>>, dataDir: string) => string[];
}

/** Builds a provider's spec: the common keys with this provider's defaults plus its own keys. */
export function defineProvider<E extends z.ZodRawShape = Record<never, never>>(
  options: DefineProviderOptions<E>,
): ProviderSpec<CommonSettings & z.output<z.ZodObject<E>>> {
  const c = { ...COMMON_FALLBACK, ...options.common };
  type S = CommonSettings & z.output<z.ZodObject<E>>;
  // Built when first asked for: a start whose configuration sets nothing for a provider takes its
  // settings from the generated listings (`listings.defaults`) and never needs the schema, and
  // building the ten or so zod schemas of a block costs about a millisecond a provider.
  let schema: z.ZodObject | undefined;
  const buildSchema = (): z.ZodObject => {
    const extra = typeof options.extra === "function" ? options.extra() : options.extra ?? {};
    return z.strictObject({ ...commonShape(c), ...extra as E });
  };
  let defaults: Record<string, unknown> | undefined;
  return {
    id: options.id,
    title: options.title,
    description: options.description,
    defaultEnabled: options.defaultEnabled ?? true,
    hidden: options.hidden ?? false,
    get schema(): z.ZodType<S> {
      return (schema ??= buildSchema()) as unknown as z.ZodType<S>;
    },
    get defaults(): Record<string, unknown> {
      return defaults ??= (schema ??= buildSchema()).parse({}) as Record<string, unknown>;
    },
    env: options.env ?? [],
    flags: options.flags ?? [],
    secrets: options.secrets ?? [],
    moved: options.moved ?? [],
    defaultTimeoutEnv: options.defaultTimeoutEnv ?? "DEFAULT_TIMEOUT",
    hosts: options.hosts ?? ((s: S) => [hostOf(s.base_url)]),
    allowNet: options.allowNet ?? [hostOf(c.base_url)],
    load: options.load,
    replaces: options.replaces ?? [],
    ...(options.plain ? { plain: options.plain } : {}),
    ...(options.check ? { check: options.check } : {}),
    ...(options.storageRoots ? { storageRoots: options.storageRoots } : {}),
  };
}

/** The common keys' schemas, with one provider's defaults. */
function commonShape(c: CommonDefaults & Omit<CommonSettings, "base_url">) {
  return {
    base_url: z.string().url().default(c.base_url).describe("Upstream base URL"),
    timeout: z.number().positive().max(3600).default(c.timeout).describe(
      "Deadline of one call in seconds, retries included",
    ),
    max_retries: z.number().int().min(0).max(10).default(c.max_retries).describe(
      "Retries after the first attempt",
    ),
    retry_backoff_ms: z.number().int().min(0).max(60_000).default(c.retry_backoff_ms).describe(
      "First backoff in milliseconds; later ones double",
    ),
    cache_ttl: z.number().min(0).max(86_400 * 7).default(c.cache_ttl).describe(
      "Seconds a successful answer is reused (0 = off)",
    ),
    rate_limit_per_minute: z.number().int().min(0).default(c.rate_limit_per_minute).describe(
      "Upstream requests per minute (0 = unlimited)",
    ),
    rate_limit_per_second: z.number().min(0).default(c.rate_limit_per_second).describe(
      "Upstream requests per second (0 = unlimited)",
    ),
    breaker_threshold: z.number().int().min(1).max(1000).default(c.breaker_threshold).describe(
      "Consecutive failures that open the circuit breaker",
    ),
    breaker_cooldown: z.number().min(0).max(86_400).default(c.breaker_cooldown).describe(
      "Seconds an open breaker waits before a trial request",
    ),
    max_body_mb: z.number().positive().max(1024).default(c.max_body_mb).describe(
      "Largest upstream body read, in MiB",
    ),
  };
}

/** `host[:port]` of a URL, as `--allow-net` spells it. */
export function hostOf(url: string): string {
  return new URL(url).host;
}

/** Whether a number is one `z.number()` takes (finite) and, with `int`, `.int()` takes. */
function isNumber(v: unknown, int: boolean): v is number {
  return typeof v === "number" && (int ? Number.isSafeInteger(v) : Number.isFinite(v));
}

/**
 * The common keys' checks as plain code: each accepts a subset of what its schema in
 * {@linkcode commonShape} accepts and leaves the value as it is, so a value it accepts comes out
 * exactly as zod would give it. `base_url` is not here: only its default value is taken as is.
 */
const PLAIN_COMMON: Record<string, (v: unknown) => boolean> = {
  timeout: (v) => isNumber(v, false) && v > 0 && v <= 3600,
  max_retries: (v) => isNumber(v, true) && v >= 0 && v <= 10,
  retry_backoff_ms: (v) => isNumber(v, true) && v >= 0 && v <= 60_000,
  cache_ttl: (v) => isNumber(v, false) && v >= 0 && v <= 86_400 * 7,
  rate_limit_per_minute: (v) => isNumber(v, true) && v >= 0,
  rate_limit_per_second: (v) => isNumber(v, false) && v >= 0,
  breaker_threshold: (v) => isNumber(v, true) && v >= 1 && v <= 1000,
  breaker_cooldown: (v) => isNumber(v, false) && v >= 0 && v <= 86_400,
  max_body_mb: (v) => isNumber(v, false) && v > 0 && v <= 1024,
};

/**
 * A provider block's settings without building its zod schema, when every value set is plainly
 * valid: a common key within its range, or any key set to exactly its default (a string, number
 * or boolean; the provider schemas have no transforms, so a default parses to itself). Anything
 * else gives undefined, and the caller validates with the schema (whose errors name the key).
 * `defaults` are the block's settings when nothing is set (the generated listings' defaults).
 */
export function plainSettings(
  spec: Pick<ProviderSpec, "replaces" | "plain">,
  defaults: Record<string, unknown>,
  values: Record<string, unknown>,
): Record<string, unknown> | undefined {
  const out = structuredClone(defaults);
  for (const [key, value] of Object.entries(values)) {
    if (!Object.hasOwn(defaults, key)) return undefined;
    const check = spec.plain?.[key] ?? (spec.replaces.includes(key) ? undefined : PLAIN_COMMON[key]);
    const plain = check ? check(value) : isPrimitive(value) && value === defaults[key];
    if (!plain) return undefined;
    out[key] = value;
  }
  return out;
}

function isPrimitive(v: unknown): v is string | number | boolean {
  return typeof v === "string" || typeof v === "number" || typeof v === "boolean";
}
