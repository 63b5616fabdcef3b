// Which prebuilt opendata-mcp binary fits this machine, and where npm put it. The binaries ship
// in one npm package per platform (optional dependencies with `os` and `cpu`, as esbuild does),
// so npm installs only the one that fits.
import { dirname, join } from "node:path";

/**
 * @typedef {object} PlatformBinary
 * @property {string} pkg The npm package holding the binary.
 * @property {string} bin The binary's path inside that package.
 * @property {string} target The Rust-style target it was compiled for (`deno compile --target`).
 */

/** @type {Readonly<Record<string, PlatformBinary>>} Keyed by `${process.platform}-${process.arch}`. */
export const PLATFORMS = Object.freeze({
  "linux-x64": {
    pkg: "@opendata-mcp/linux-x64",
    bin: "bin/opendata-mcp",
    target: "x86_64-unknown-linux-gnu",
  },
  "linux-arm64": {
    pkg: "@opendata-mcp/linux-arm64",
    bin: "bin/opendata-mcp",
    target: "aarch64-unknown-linux-gnu",
  },
  "darwin-x64": { pkg: "@opendata-mcp/darwin-x64", bin: "bin/opendata-mcp", target: "x86_64-apple-darwin" },
  "darwin-arm64": {
    pkg: "@opendata-mcp/darwin-arm64",
    bin: "bin/opendata-mcp",
    target: "aarch64-apple-darwin",
  },
  "win32-x64": {
    pkg: "@opendata-mcp/win32-x64",
    bin: "bin/opendata-mcp.exe",
    target: "x86_64-pc-windows-msvc",
  },
});

/** Environment variable that names a binary to run instead (a local build, an unsupported platform). */
export const BINARY_ENV = "OPENDATA_MCP_BINARY";

const ALTERNATIVES =
  "Run it from source with Deno (deno task start) or in a container (docker compose up): " +
  "https://github.com/opendata-mcp/opendata-mcp#readme";

/**
 * The binary for `platform`-`arch` (Node's `process.platform` and `process.arch`).
 * @param {{ platform: string, arch: string, libc?: string | undefined }} host
 * @returns {PlatformBinary}
 */
export function resolvePlatform(host) {
  const key = `${host.platform}-${host.arch}`;
  const entry = PLATFORMS[key];
  if (!entry) {
    throw new Error(
      `No prebuilt binary for "${key}"; there are binaries for ${Object.keys(PLATFORMS).join(", ")}. ` +
        `${ALTERNATIVES}, or set ${BINARY_ENV} to a binary you built with deno task compile`,
    );
  }
  if (host.platform === "linux" && host.libc === "musl") {
    throw new Error(
      `The Linux binaries need glibc, and this system uses musl (Alpine?). ${ALTERNATIVES}`,
    );
  }
  return entry;
}

/**
 * `glibc` or `musl` on Linux (from Node's diagnostic report), else undefined.
 * @param {{ platform: string, report?: { getReport(): unknown } | undefined }} proc `process`
 * @returns {string | undefined}
 */
export function detectLibc(proc) {
  if (proc.platform !== "linux" || !proc.report) return undefined;
  const report = /** @type {{ header?: { glibcVersionRuntime?: string } }} */ (proc.report.getReport());
  return report?.header?.glibcVersionRuntime ? "glibc" : "musl";
}

/**
 * The path of the binary to run: `OPENDATA_MCP_BINARY` when set, else the platform package's.
 * @param {{ platform: string, arch: string, libc?: string | undefined,
 *   env: Record<string, string | undefined>, resolve: (id: string) => string }} options
 *   `resolve` is `require.resolve` of the launcher package.
 * @returns {string}
 */
export function binaryPath(options) {
  const override = options.env[BINARY_ENV];
  if (override) return override;
  const entry = resolvePlatform(options);
  let manifest;
  try {
    manifest = options.resolve(`${entry.pkg}/package.json`);
  } catch {
    throw new Error(
      `The package "${entry.pkg}" that holds the binary for ${options.platform}-${options.arch} is not installed. ` +
        `npm skips optional dependencies with --omit=optional (or --no-optional): reinstall without it, ` +
        `e.g. npx --yes opendata-mcp@latest`,
    );
  }
  return join(dirname(manifest), entry.bin);
}

/**
 * The binary's environment: the launcher's, with `MALLOC_ARENA_MAX=1` on Linux unless it is set,
 * as `deno task start` and the image run the server (one glibc malloc arena, so V8's compiler
 * threads keep no freed memory resident: docs/DEPLOYMENT.md). glibc reads it only as a process
 * starts, so the binary cannot set it for itself.
 * @param {Record<string, string | undefined>} env `process.env`
 * @param {string} platform `process.platform`
 * @returns {Record<string, string | undefined>}
 */
export function binaryEnv(env, platform) {
  if (platform !== "linux" || env.MALLOC_ARENA_MAX !== undefined) return env;
  return { ...env, MALLOC_ARENA_MAX: "1" };
}
