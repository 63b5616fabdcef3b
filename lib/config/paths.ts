/** The operating systems whose conventions we follow. */
export type Os = "linux" | "darwin" | "windows" | (string & Record<never, never>);

const APP = "opendata-mcp";

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
