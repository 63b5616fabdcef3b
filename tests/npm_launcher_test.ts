import { CORE_TOOLS } from "./harness/results.ts";
// The npm launcher (npm/opendata-mcp): which platform package it picks for each OS and
// architecture, its errors, and, under Node, a run through it as `npx opendata-mcp` would.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  BINARY_ENV,
  binaryEnv,
  binaryPath,
  detectLibc,
  PLATFORMS,
  resolvePlatform,
} from "../npm/opendata-mcp/lib/platform.js";
import { npmPlatformPackage, RELEASE_TARGETS } from "../tools/distribution.ts";
import { smoke } from "../tools/smoke.ts";

const ROOT = new URL("../", import.meta.url).pathname;

Deno.test("resolvePlatform() picks the package of each released OS and architecture", () => {
  assert.deepEqual(
    RELEASE_TARGETS.map((t) => resolvePlatform({ platform: t.os, arch: t.arch, libc: "glibc" })),
    RELEASE_TARGETS.map((t) => ({
      pkg: npmPlatformPackage(t),
      bin: t.os === "win32" ? "bin/opendata-mcp.exe" : "bin/opendata-mcp",
      target: t.target,
    })),
  );
  assert.equal(Object.keys(PLATFORMS).length, RELEASE_TARGETS.length);
  assert.equal(resolvePlatform({ platform: "darwin", arch: "arm64" }).pkg, "@opendata-mcp/darwin-arm64");
});

Deno.test("resolvePlatform() refuses unsupported platforms and musl, naming what exists and what to do", () => {
  for (
    const [platform, arch] of [["win32", "arm64"], ["linux", "ia32"], ["freebsd", "x64"], ["linux", "s390x"]]
  ) {
    assert.throws(
      () => resolvePlatform({ platform: platform!, arch: arch! }),
      new RegExp(
        `^Error: No prebuilt binary for "${platform}-${arch}"; there are binaries for linux-x64, linux-arm64, ` +
          `darwin-x64, darwin-arm64, win32-x64\\. Run it from source with Deno .* or set OPENDATA_MCP_BINARY`,
      ),
    );
  }
  assert.throws(
    () => resolvePlatform({ platform: "linux", arch: "x64", libc: "musl" }),
    /The Linux binaries need glibc, and this system uses musl \(Alpine\?\)\. Run it from source with Deno/,
  );
});

Deno.test("binaryPath() finds the binary in the installed package, honours OPENDATA_MCP_BINARY, explains a skipped package", () => {
  const resolve = (id: string) => {
    if (id === "@opendata-mcp/linux-x64/package.json") {
      return "/x/node_modules/@opendata-mcp/linux-x64/package.json";
    }
    throw new Error(`Cannot find module '${id}'`);
  };
  assert.equal(
    binaryPath({ platform: "linux", arch: "x64", libc: "glibc", env: {}, resolve }),
    "/x/node_modules/@opendata-mcp/linux-x64/bin/opendata-mcp",
  );
  assert.equal(
    binaryPath({ platform: "plan9", arch: "mips", env: { [BINARY_ENV]: "/opt/od/opendata-mcp" }, resolve }),
    "/opt/od/opendata-mcp",
  );
  assert.throws(
    () => binaryPath({ platform: "darwin", arch: "arm64", env: {}, resolve }),
    /The package "@opendata-mcp\/darwin-arm64" that holds the binary for darwin-arm64 is not installed\. npm skips optional dependencies with --omit=optional/,
  );
});

Deno.test("binaryEnv() sets MALLOC_ARENA_MAX=1 for the binary on Linux unless it is set, and leaves others alone", () => {
  assert.deepEqual(binaryEnv({ PATH: "/bin" }, "linux"), { PATH: "/bin", MALLOC_ARENA_MAX: "1" });
  assert.deepEqual(
    binaryEnv({ MALLOC_ARENA_MAX: "4" }, "linux"),
    { MALLOC_ARENA_MAX: "4" },
    "the user's value",
  );
  assert.deepEqual(binaryEnv({ PATH: "/bin" }, "darwin"), { PATH: "/bin" });
  assert.deepEqual(binaryEnv({ PATH: "C:\\" }, "win32"), { PATH: "C:\\" });
});

Deno.test("detectLibc() reads glibc or musl from Node's report on Linux only", () => {
  const report = (header: Record<string, unknown>) => ({ getReport: () => ({ header }) });
  assert.equal(detectLibc({ platform: "linux", report: report({ glibcVersionRuntime: "2.39" }) }), "glibc");
  assert.equal(detectLibc({ platform: "linux", report: report({}) }), "musl");
  assert.equal(detectLibc({ platform: "darwin", report: report({}) }), undefined);
});

function findNode(): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      if (Deno.statSync(join(dir, "node")).isFile) return join(dir, "node");
    } catch {
      // Not here.
    }
  }
  return undefined;
}

const NODE = findNode();
const HOST = `${Deno.build.os === "windows" ? "win32" : Deno.build.os}-${
  Deno.build.arch === "x86_64" ? "x64" : "arm64"
}`;

Deno.test({
  name:
    "bin/opendata-mcp.js under Node runs the platform package's binary with the arguments, stdio and exit code",
  ignore: NODE === undefined || Deno.build.os === "windows" || !(HOST in PLATFORMS),
  async fn() {
    // node_modules as npm lays it out: the launcher, and the platform package whose "binary" is a
    // script that runs this checkout's server the way deno task start does.
    const dir = Deno.makeTempDirSync({ prefix: "opendata-mcp-npm-" });
    try {
      const modules = join(dir, "node_modules");
      const launcher = join(modules, "opendata-mcp");
      for (const sub of ["bin", "lib"]) Deno.mkdirSync(join(launcher, sub), { recursive: true });
      for (const file of ["package.json", "bin/opendata-mcp.js", "lib/platform.js"]) {
        Deno.copyFileSync(join(ROOT, "npm/opendata-mcp", file), join(launcher, file));
      }
      const entry = PLATFORMS[HOST]!;
      const pkg = join(modules, ...entry.pkg.split("/"));
      Deno.mkdirSync(join(pkg, "bin"), { recursive: true });
      Deno.writeTextFileSync(
        join(pkg, "package.json"),
        JSON.stringify({ name: entry.pkg, version: "0.0.0" }),
      );
      const bin = join(pkg, entry.bin);
      Deno.writeTextFileSync(
        bin,
        `#!/bin/sh\nif [ "$1" = exit-7 ]; then exit 7; fi\nif [ "$1" = arena ]; then echo "arena=$MALLOC_ARENA_MAX"; exit 0; fi\nexec "${Deno.execPath()}" run -q -P --no-prompt --config "${
          join(ROOT, "deno.json")
        }" "${join(ROOT, "main.ts")}" "$@"\n`,
      );
      Deno.chmodSync(bin, 0o755);
      const env = {
        PATH: Deno.env.get("PATH") ?? "",
        HOME: dir,
        DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
      };

      const result = await smoke(
        [NODE!, join(launcher, "bin", "opendata-mcp.js"), "--providers", "example"],
        {
          env,
          cwd: dir,
        },
      );
      // The default surface: the core tools, which reach the example tools too.
      assert.deepEqual(result.tools, [...CORE_TOOLS]);

      const code = await new Deno.Command(NODE!, {
        args: [join(launcher, "bin", "opendata-mcp.js"), "exit-7"],
        env,
        clearEnv: true,
        stdout: "null",
        stderr: "null",
      }).output();
      assert.equal(code.code, 7, "the binary's exit code");

      // On Linux the binary runs with one malloc arena, as deno task start does, unless the user set one.
      for (const [set, seen] of [[undefined, Deno.build.os === "linux" ? "1" : ""], ["2", "2"]] as const) {
        const arena = await new Deno.Command(NODE!, {
          args: [join(launcher, "bin", "opendata-mcp.js"), "arena"],
          env: set === undefined ? env : { ...env, MALLOC_ARENA_MAX: set },
          clearEnv: true,
          stdout: "piped",
          stderr: "null",
        }).output();
        assert.equal(new TextDecoder().decode(arena.stdout), `arena=${seen}\n`);
      }

      Deno.removeSync(pkg, { recursive: true });
      const missing = await new Deno.Command(NODE!, {
        args: [join(launcher, "bin", "opendata-mcp.js"), "--version"],
        env,
        clearEnv: true,
        stderr: "piped",
      }).output();
      assert.equal(missing.code, 1);
      assert.match(new TextDecoder().decode(missing.stderr), /^opendata-mcp: The package "@opendata-mcp\//);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});
