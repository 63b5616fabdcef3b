/** The operating systems whose conventions we follow. */
export type Os = "linux" | "darwin" | "windows" | (string & Record<never, never>);

const APP = "opendata-mcp";

/** The project's config file, relative to the working directory (docs/CONFIGURATION.md). */
export const PROJECT_CONFIG = "config/apis.yaml";

/**
 * The per-user config file: `$XDG_CONFIG_HOME/opendata-mcp/config.yaml` (default
 * `~/.config/...`) on Linux, `~/Library/Application Support/opendata-mcp/config.yaml` on macOS,
 * `%APPDATA%\opendata-mcp\config.yaml` on Windows. Undefined when no home is known.
 */
export function userConfigPath(env: Record<string, string | undefined>, os: Os): string | undefined {
  const dir = userDir(env, os, "config");
  return dir ? join(os, dir, "config.yaml") : undefined;
}

/**
 * The per-user data folder: `$XDG_DATA_HOME/opendata-mcp` (default `~/.local/share/...`) on
 * Linux, `~/Library/Application Support/opendata-mcp` on macOS, `%LOCALAPPDATA%\opendata-mcp`
 * on Windows. A desktop client may start the server in any folder, even `/`, so nothing is
 * written relative to the working directory.
 */
export function userDataDir(env: Record<string, string | undefined>, os: Os): string | undefined {
  return userDir(env, os, "data");
}

function userDir(
  env: Record<string, string | undefined>,
  os: Os,
  kind: "config" | "data",
): string | undefined {
  if (os === "windows") {
    const base = kind === "config" ? env["APPDATA"] : (env["LOCALAPPDATA"] ?? env["APPDATA"]);
    return base ? join(os, base, APP) : undefined;
  }
  const home = env["HOME"];
  if (os === "darwin") return home ? `${home}/Library/Application Support/${APP}` : undefined;
  const xdg = kind === "config" ? env["XDG_CONFIG_HOME"] : env["XDG_DATA_HOME"];
  if (xdg) return `${xdg}/${APP}`;
  if (!home) return undefined;
  return kind === "config" ? `${home}/.config/${APP}` : `${home}/.local/share/${APP}`;
}

function join(os: Os, ...parts: string[]): string {
  return parts.join(os === "windows" ? "\\" : "/");
}

/** Where a config file candidate comes from, for messages and `config check`. */
export type ConfigOrigin = "--config" | "OPENDATA_MCP_CONFIG" | "working directory" | "per-user file";

/** One place a config file is looked for. */
export interface ConfigCandidate {
  path: string;
  origin: ConfigOrigin;
  /** Named explicitly (flag or variable): a missing file is an error, not a reason to look further. */
  required: boolean;
}

/** Options for {@linkcode configCandidates}. */
export interface ConfigCandidatesOptions {
  /** `--config FILE`, when given. */
  flag?: string | undefined;
  env: Record<string, string | undefined>;
  os: Os;
  /**
   * The working directory's `config/apis.yaml`, looked for only when running
   * from source; compiled binaries pass nothing, because desktop clients start them in any
   * folder, where a `config/apis.yaml` may belong to another project.
   */
  projectConfig?: string | undefined;
}

/**
 * The config files to try, first match wins: `--config FILE`, else `OPENDATA_MCP_CONFIG`, else
 * `./config/apis.yaml` (from source only), else the per-user file; none means built-in defaults.
 */
export function configCandidates(options: ConfigCandidatesOptions): ConfigCandidate[] {
  if (options.flag) return [{ path: options.flag, origin: "--config", required: true }];
  const fromEnv = options.env["OPENDATA_MCP_CONFIG"];
  if (fromEnv) return [{ path: fromEnv, origin: "OPENDATA_MCP_CONFIG", required: true }];
  const out: ConfigCandidate[] = [];
  if (options.projectConfig) {
    out.push({ path: options.projectConfig, origin: "working directory", required: false });
  }
  const user = userConfigPath(options.env, options.os);
  if (user) out.push({ path: user, origin: "per-user file", required: false });
  return out;
}
