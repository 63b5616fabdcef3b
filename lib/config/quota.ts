// The quota block of the `server` settings: `writes` and the four `quota_*` keys, the preset
// `writes: bounded` stands for, and the old names still read as deprecated aliases.
//
// Old deployments set what is now one quota in several places: FRED's per-client keys
// (`FRED_MAX_*_PER_CLIENT`), the result files' `OPENDATA_MCP_EXPORT_MAX_MB_PER_CLIENT`, and
// `writes_max_*`, which applied with `writes: bounded` only. They keep working, each with one
// warning at start naming its new key, rather than stopping the server: an upgrade that only
// renames settings should not take a deployment down, and the warning says what to rename.
// Where several old names set one key (FRED's byte limit and the result files' one both set
// quota_mb) the smallest is taken, so an upgrade never gives a client more room than the
// tighter of its old limits; the one value then covers both kinds of file, which each limit
// covered apart before (docs/CONFIGURATION.md says so). A new key that is set wins over every
// old one.
import { ConfigError } from "../errors.ts";
import { convert } from "./convert.ts";
import type { MovedSetting, ProviderSpec } from "./provider_spec.ts";
import type { ServerSettings } from "./server_settings.ts";

/** The four quota keys of the `server` block. */
export type QuotaKey = "quota_projects" | "quota_mb" | "quota_jobs" | "quota_job_records";

/** The quota with `writes: on`: the per-client defaults the old FRED and export settings had. */
export const QUOTA_ON: Readonly<Record<QuotaKey, number>> = {
  quota_projects: 10,
  quota_mb: 100,
  quota_jobs: 4,
  quota_job_records: 100,
};

/**
 * The quota with `writes: bounded` (keys not set explicitly): the old `writes_max_*` defaults,
 * and a fifth of the job records of `on`.
 */
export const QUOTA_BOUNDED: Readonly<Record<QuotaKey, number>> = {
  quota_projects: 3,
  quota_mb: 16,
  quota_jobs: 2,
  quota_job_records: 20,
};

const QUOTA_KEYS = Object.keys(QUOTA_ON) as QuotaKey[];

/** An old `server` key (and variable) now read as a quota key. */
interface ServerAlias {
  key: string;
  env?: string;
  kind: "int" | "number";
  to: QuotaKey;
  /** The old key applied with `writes: bounded` only. */
  boundedOnly?: boolean;
}

/** Old `server` keys and variables of the quota. */
export const DEPRECATED_SERVER: readonly ServerAlias[] = [
  {
    key: "export_max_mb_per_client",
    env: "OPENDATA_MCP_EXPORT_MAX_MB_PER_CLIENT",
    kind: "number",
    to: "quota_mb",
  },
  { key: "writes_max_projects", kind: "int", to: "quota_projects", boundedOnly: true },
  { key: "writes_max_mb", kind: "number", to: "quota_mb", boundedOnly: true },
  { key: "writes_max_jobs", kind: "int", to: "quota_jobs", boundedOnly: true },
];

/** The environment variables of the old names (still on the `--allow-env` list). */
export function deprecatedEnvNames(specs: readonly ProviderSpec[]): string[] {
  return [
    ...DEPRECATED_SERVER.flatMap((a) => a.env === undefined ? [] : [a.env]),
    ...specs.flatMap((s) => s.moved.map((m) => m.env)),
  ];
}

/** One old name found in the configuration, with its value. */
export interface AliasValue {
  /** How the operator spelled it: `FRED_MAX_PROJECTS_PER_CLIENT`, `server.writes_max_mb`, ... */
  name: string;
  to: string;
  value: unknown;
  kind: "int" | "number" | MovedSetting["kind"];
  boundedOnly?: boolean;
}

/**
 * Takes the old quota keys out of the file's `server` block (they are not keys of its schema any
 * more) and collects them and the old variables.
 */
export function takeServerAliases(
  fileServer: Record<string, unknown>,
  env: Record<string, string | undefined>,
  fileLabel: string,
): AliasValue[] {
  const out: AliasValue[] = [];
  for (const a of DEPRECATED_SERVER) {
    const { kind, to } = a;
    const boundedOnly = a.boundedOnly === true;
    if (Object.hasOwn(fileServer, a.key)) {
      out.push({
        name: `server.${a.key} in the ${fileLabel}`,
        to,
        value: fileServer[a.key],
        kind,
        boundedOnly,
      });
      delete fileServer[a.key];
    }
    const raw = a.env === undefined ? undefined : env[a.env];
    if (a.env !== undefined && raw !== undefined && raw !== "") {
      out.push({ name: a.env, to, value: convert(raw, kind, a.env), kind, boundedOnly });
    }
  }
  return out;
}

/**
 * Takes a provider's moved keys out of its file block (so its strict schema does not refuse
 * them) and, when the provider is enabled, collects them and their variables.
 */
export function takeMovedSettings(
  spec: ProviderSpec,
  block: Record<string, unknown>,
  env: Record<string, string | undefined>,
  enabled: boolean,
  fileLabel: string,
): AliasValue[] {
  const out: AliasValue[] = [];
  for (const m of spec.moved) {
    if (Object.hasOwn(block, m.key)) {
      if (enabled) {
        out.push({
          name: `providers.${spec.id}.${m.key} in the ${fileLabel}`,
          to: m.to,
          value: block[m.key],
          kind: m.kind,
        });
      }
      delete block[m.key];
    }
    const raw = env[m.env];
    if (enabled && raw !== undefined && raw !== "") {
      out.push({ name: m.env, to: m.to, value: convert(raw, m.kind, m.env), kind: m.kind });
    }
  }
  return out;
}

/**
 * The quota keys from what was set: a quota key set anywhere (`explicit`) wins; else the
 * smallest of its old names that apply, and with `writes: bounded` the preset (the old
 * `writes_max_*` in its place, when given) among them; else the default. Pushes one warning
 * per old name found.
 */
export function resolveQuota(
  server: ServerSettings,
  explicit: ReadonlySet<string>,
  aliases: readonly AliasValue[],
  warnings: string[],
): void {
  const bounded = server.writes === "bounded";
  for (const key of QUOTA_KEYS) {
    const mine = aliases.filter((a) => a.to === key);
    const candidates: number[] = [];
    let boundedGiven = false;
    for (const a of mine) {
      const value = checked(a);
      const envName = `MCP_${key.toUpperCase()}`;
      if (explicit.has(key)) {
        warnings.push(`${a.name} is deprecated and ignored: "${key}" (${envName}) is set; remove it`);
      } else if (a.boundedOnly && !bounded) {
        warnings.push(
          `${a.name} is deprecated and has no effect (it applied with writes: bounded only); the one per-client quota is "${key}" (${envName})`,
        );
      } else {
        warnings.push(
          `${a.name} is deprecated: it now sets "${key}" (${envName}), the one per-client quota of every provider and result file; rename it`,
        );
        candidates.push(value);
        if (a.boundedOnly) boundedGiven = true;
      }
    }
    if (explicit.has(key)) continue;
    if (bounded && !boundedGiven) candidates.push(QUOTA_BOUNDED[key]);
    if (candidates.length > 0) server[key] = Math.min(...candidates);
  }
}

/** An old name's value, checked as its old schema did (a positive number; whole for counts). */
function checked(a: AliasValue): number {
  const v = a.value;
  const ok = typeof v === "number" && Number.isFinite(v) &&
    (a.kind === "int" ? Number.isSafeInteger(v) && v >= 1 : v > 0);
  if (!ok) {
    throw new ConfigError(
      a.name,
      `Invalid ${a.name}: expected ${
        a.kind === "int" ? "a whole number of at least 1" : "a positive number"
      }, got ${JSON.stringify(v)}`,
    );
  }
  return v;
}
