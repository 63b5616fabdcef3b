// What the release ships, as data: the five targets, the MCP bundle manifests (MCPB 0.3), the
// MCP registry's server.json and the npm platform packages. Pure functions: `deno task docs`
// writes manifest.json from them, tools/release.ts assembles a release, and
// tests/distribution_test.ts checks them.
import { CONTACT_URL, SERVER_NAME, VERSION } from "../lib/version.ts";

/** One release target: how `deno compile` names it, what its binary is called, where it runs. */
export interface ReleaseTarget {
  /** `deno compile --target` */
  target: string;
  /** The binary's name under `dist/`. */
  binary: string;
  /** Short label used in asset names: `x86_64-linux`. */
  label: string;
  /** Node's `process.platform`, MCPB's platform names. */
  os: "linux" | "darwin" | "win32";
  /** Node's `process.arch`. */
  arch: "x64" | "arm64";
  /** The GitHub-hosted runner of this OS and architecture, where the binary is smoke-tested. */
  runner: string;
}

/** The release targets (GitHub runner labels checked against GitHub's runner list, 2026). */
export const RELEASE_TARGETS: readonly ReleaseTarget[] = [
  {
    target: "x86_64-unknown-linux-gnu",
    binary: "opendata-mcp-x86_64-linux",
    label: "x86_64-linux",
    os: "linux",
    arch: "x64",
    runner: "ubuntu-24.04",
  },
  {
    target: "aarch64-unknown-linux-gnu",
    binary: "opendata-mcp-aarch64-linux",
    label: "aarch64-linux",
    os: "linux",
    arch: "arm64",
    runner: "ubuntu-24.04-arm",
  },
  {
    target: "x86_64-apple-darwin",
    binary: "opendata-mcp-x86_64-macos",
    label: "x86_64-macos",
    os: "darwin",
    arch: "x64",
    runner: "macos-15-intel",
  },
  {
    target: "aarch64-apple-darwin",
    binary: "opendata-mcp-aarch64-macos",
    label: "aarch64-macos",
    os: "darwin",
    arch: "arm64",
    runner: "macos-15",
  },
  {
    target: "x86_64-pc-windows-msvc",
    binary: "opendata-mcp-x86_64-windows.exe",
    label: "x86_64-windows",
    os: "win32",
    arch: "x64",
    runner: "windows-2025",
  },
];

/** `owner/name` of the GitHub repository, from the contact URL. */
export const REPOSITORY = new URL(CONTACT_URL).pathname.replace(/^\//, "");

/** The server's name in the MCP registry (GitHub namespace, so GitHub OIDC can publish it). */
export function registryName(repository = REPOSITORY): string {
  const [owner, name] = repository.split("/");
  return `io.github.${owner}/${name}`;
}

/** The npm package that holds `target`'s binary. */
export function npmPlatformPackage(target: ReleaseTarget): string {
  return `@opendata-mcp/${target.os}-${target.arch}`;
}

/** The bundle's file name: `opendata-mcp-0.1.0-x86_64-linux.mcpb`. */
export function bundleFileName(target: ReleaseTarget, version = VERSION): string {
  return `${SERVER_NAME}-${version}-${target.label}.mcpb`;
}

/** A tool as the MCPB manifest lists it. */
export interface ManifestTool {
  name: string;
  description: string;
}

/** The settings a bundle asks for in the client's UI, and the variables they become. */
export const USER_CONFIG = {
  fred_api_key: {
    env: "FRED_API_KEY",
    option: {
      type: "string",
      title: "FRED API key",
      description:
        "Free key for the FRED tools (https://fredaccount.stlouisfed.org/apikeys). Without it only the FRED project tools are served; the other providers work.",
      sensitive: true,
      required: false,
      default: "",
    },
  },
  data_dir: {
    env: "OPENDATA_MCP_DATA_DIR",
    option: {
      type: "directory",
      title: "Data folder",
      description:
        "Where the server writes files (FRED exports). Empty: the per-user data folder (~/Library/Application Support/opendata-mcp on macOS, %LOCALAPPDATA%\\opendata-mcp on Windows, ~/.local/share/opendata-mcp on Linux).",
      required: false,
      default: "",
    },
  },
  toolsets: {
    env: "OPENDATA_MCP_TOOLSETS",
    option: {
      type: "string",
      title: "Toolsets",
      description:
        "Comma-separated toolsets whose tools are listed besides the search, describe and call tools (e.g. fred-data,wikipedia; all: every toolset). Empty: only those three, which reach every tool.",
      required: false,
      default: "",
    },
  },
} as const;

const DESCRIPTION =
  "Public open data for AI agents: World Bank, Bank of Japan, FRED, Wikipedia, SNL, Riksantikvaren, GeoNorge";

/** server.json's description: the MCP registry refuses one longer than 100 characters. */
export const REGISTRY_DESCRIPTION =
  "Open data for AI agents: World Bank, Bank of Japan, FRED, Wikipedia, SNL, Riksantikvaren, GeoNorge";

/** The licence (SPDX) of the server, as LICENSE states it; every package and manifest names it. */
export const LICENSE = "MIT";

/**
 * The MCPB manifest. Without `target` it is the checked-in `manifest.json` (every platform, the
 * Windows binary's name in `platform_overrides`); with one, the manifest of that target's bundle.
 * Every optional `user_config` has a default: an unset value without one would reach the server
 * as the literal text `${user_config.KEY}`.
 */
export function mcpbManifest(
  tools: readonly ManifestTool[],
  target?: ReleaseTarget,
): Record<string, unknown> {
  const exe = target?.os === "win32" ? ".exe" : "";
  const env: Record<string, string> = Object.fromEntries(
    Object.entries(USER_CONFIG).map(([key, c]) => [c.env, `\${user_config.${key}}`]),
  );
  // As deno task start, the image and the npm launcher run it: one glibc malloc arena, which glibc
  // reads only as a process starts (docs/DEPLOYMENT.md); other systems ignore it.
  env["MALLOC_ARENA_MAX"] = "1";
  const mcpConfig: Record<string, unknown> = {
    command: `\${__dirname}/server/${SERVER_NAME}${exe}`,
    args: [],
    env,
  };
  if (!target) {
    mcpConfig["platform_overrides"] = { win32: { command: `\${__dirname}/server/${SERVER_NAME}.exe` } };
  }
  return {
    manifest_version: "0.3",
    name: SERVER_NAME,
    display_name: "Open data (World Bank, BOJ, FRED, Wikipedia, SNL, Riksantikvaren)",
    version: VERSION,
    description: DESCRIPTION,
    long_description: "Bounded, attributable access to public data. Every result names its source URL and " +
      "licence; long results are cut at an item boundary with a notice saying how to get the rest. The " +
      "FRED tools need a free API key.",
    author: { name: "opendata-mcp contributors", url: CONTACT_URL },
    license: LICENSE,
    repository: { type: "git", url: CONTACT_URL },
    homepage: CONTACT_URL,
    documentation: `${CONTACT_URL}#readme`,
    support: `${CONTACT_URL}/issues`,
    server: {
      type: "binary",
      entry_point: `server/${SERVER_NAME}${exe}`,
      mcp_config: mcpConfig,
    },
    tools: tools.map((t) => ({ name: t.name, description: t.description })),
    tools_generated: false,
    prompts_generated: true,
    keywords: ["open data", "statistics", "economics", "encyclopedia", "cultural heritage", "geodata"],
    compatibility: { platforms: target ? [target.os] : ["darwin", "win32", "linux"] },
    user_config: Object.fromEntries(Object.entries(USER_CONFIG).map(([key, c]) => [key, c.option])),
  };
}

/** How people name an OS, by its MCPB platform name. */
const OS_TITLES: Readonly<Record<ReleaseTarget["os"], string>> = {
  linux: "Linux",
  darwin: "macOS",
  win32: "Windows",
};

/**
 * The manifest of `target`'s bundle, derived from the checked-in manifest. MCPB's `compatibility`
 * names platforms (OSes) but no architecture, so the x86_64 and aarch64 bundles of one OS would
 * look alike to a client: the name and display name carry the architecture (`opendata-mcp-aarch64-linux`,
 * "... for Linux aarch64"), as the bundle's file name does.
 */
export function targetManifest(
  base: Record<string, unknown>,
  target: ReleaseTarget,
): Record<string, unknown> {
  const tools = base["tools"] as ManifestTool[];
  const wanted = mcpbManifest(tools, target);
  const machine = target.label.split("-")[0];
  return {
    ...base,
    name: `${base["name"]}-${target.label}`,
    display_name: `${base["display_name"]} for ${OS_TITLES[target.os]} ${machine}`,
    server: wanted["server"],
    compatibility: wanted["compatibility"],
  };
}

/** Variables the registry entry lists for clients that install a package. */
function environmentVariables(): Record<string, unknown>[] {
  return Object.values(USER_CONFIG).map((c) => ({
    name: c.env,
    description: c.option.description,
    isRequired: false,
    ...("sensitive" in c.option && c.option.sensitive ? { isSecret: true } : {}),
  }));
}

/** Options for {@linkcode serverJson}. */
export interface ServerJsonOptions {
  version: string;
  /** `owner/name` */
  repository: string;
  /** The release tag the bundles are attached to. */
  tag: string;
  /**
   * SHA-256 (hex) of each target's bundle, by label. Without it, the committed template: the
   * bundles carry no `fileSha256` until the release fills it in.
   */
  bundleSha256?: Record<string, string>;
}

/** The key of publisher-provided metadata in server.json's `_meta` (registry schema). */
export const PUBLISHER_META = "io.modelcontextprotocol.registry/publisher-provided";

/**
 * The MCP registry's `server.json` (schema 2025-12-11): the npm launcher and one bundle per target.
 * The schema has no field for a package's platform, so each bundle's file name says its OS and
 * architecture, and `_meta` (publisher-provided) maps each bundle to them, with the licence (the
 * schema has no licence field either).
 */
export function serverJson(options: ServerJsonOptions): Record<string, unknown> {
  const url = `https://github.com/${options.repository}`;
  const bundleUrl = (t: ReleaseTarget) =>
    `${url}/releases/download/${options.tag}/${bundleFileName(t, options.version)}`;
  return {
    $schema: "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
    name: registryName(options.repository),
    title: "Open data",
    description: REGISTRY_DESCRIPTION,
    version: options.version,
    repository: { url, source: "github" },
    websiteUrl: `${url}#readme`,
    packages: [
      {
        registryType: "npm",
        identifier: SERVER_NAME,
        version: options.version,
        transport: { type: "stdio" },
        environmentVariables: environmentVariables(),
      },
      ...RELEASE_TARGETS.map((t) => {
        const sha = options.bundleSha256?.[t.label];
        if (options.bundleSha256 && (!sha || !/^[a-f0-9]{64}$/.test(sha))) {
          throw new Error(`No SHA-256 for the bundle of "${t.label}"`);
        }
        return {
          registryType: "mcpb",
          identifier: bundleUrl(t),
          version: options.version,
          ...(sha ? { fileSha256: sha } : {}),
          transport: { type: "stdio" },
          environmentVariables: environmentVariables(),
        };
      }),
    ],
    _meta: {
      [PUBLISHER_META]: {
        license: LICENSE,
        platforms: Object.fromEntries(
          RELEASE_TARGETS.map((t) => [bundleUrl(t), { os: t.os, arch: t.arch, target: t.target }]),
        ),
      },
    },
  };
}

/** The `package.json` of `target`'s npm package (the binary goes in its `bin/`). */
export function npmPlatformPackageJson(target: ReleaseTarget, version: string): Record<string, unknown> {
  return {
    name: npmPlatformPackage(target),
    version,
    description: `The ${target.label} binary of opendata-mcp (installed by the opendata-mcp package)`,
    homepage: `${CONTACT_URL}#readme`,
    repository: { type: "git", url: `git+${CONTACT_URL}.git` },
    license: LICENSE,
    os: [target.os],
    cpu: [target.arch],
    files: ["bin/"],
    preferUnplugged: true,
  };
}
