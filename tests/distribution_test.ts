// The distribution files agree with the code and with each other: the MCP bundle manifest, the
// release assembly (tools/release.ts, run here with stand-in binaries), the container
// files, the npm launcher package and the workflows' runner matrix.
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { VERSION } from "../lib/version.ts";
import {
  bundleFileName,
  npmPlatformPackage,
  npmPlatformPackageJson,
  PUBLISHER_META,
  registryName,
  RELEASE_TARGETS,
  REPOSITORY,
  USER_CONFIG,
} from "../tools/distribution.ts";
import { BUNDLE_ENTRY } from "../tools/bundle.ts";
import {
  envGranted,
  envNames,
  HTTP_V8_FLAGS,
  permissionTasks,
  splitStartTask,
  START_ENV,
  V8_FLAGS,
} from "../tools/permissions.ts";
import {
  releaseNotes,
  serverJsonTemplate,
  sha256,
  versionMismatches,
  writeBundles,
  writeNpmPackages,
  writeServerJson,
  writeSha256Sums,
} from "../tools/release.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** Variables a distribution file passes that the server will read once their issue lands. */
const PENDING_ENV: string[] = [];

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(Deno.readTextFileSync(join(ROOT, path)));
}

Deno.test("manifest.json is an MCPB 0.3 binary bundle whose settings map to the server's variables", () => {
  const manifest = readJson("manifest.json");
  assert.equal(manifest["manifest_version"], "0.3");
  assert.equal(manifest["version"], VERSION);
  const server = manifest["server"] as {
    type: string;
    entry_point: string;
    mcp_config: { env: Record<string, string> };
  };
  assert.equal(server.type, "binary");
  // The tools, and the sources opendata_search names, are those a bundle serves by default: not the
  // example provider's (enabled only on request).
  const tools = manifest["tools"] as { name: string; description: string }[];
  assert.ok(tools.some((t) => t.name === "opendata_search"));
  assert.doesNotMatch(JSON.stringify(tools), /example-|Example echo/);
  assert.deepEqual(server.mcp_config.env, {
    FRED_API_KEY: "${user_config.fred_api_key}",
    OPENDATA_MCP_DATA_DIR: "${user_config.data_dir}",
    OPENDATA_MCP_TOOLSETS: "${user_config.toolsets}",
    // Read by glibc as the binary starts, not by the server: one malloc arena, as deno task start.
    MALLOC_ARENA_MAX: "1",
  });
  const userConfig = manifest["user_config"] as Record<string, Record<string, unknown>>;
  assert.equal(userConfig["fred_api_key"]?.["sensitive"], true, "the FRED key is masked and stored securely");
  assert.equal(userConfig["data_dir"]?.["type"], "directory");
  for (const [key, option] of Object.entries(userConfig)) {
    // Clients leave ${user_config.KEY} unreplaced when a value has neither user input nor default.
    assert.ok(option["required"] === true || option["default"] !== undefined, `${key} needs a default`);
  }
  for (const [name, value] of Object.entries(server.mcp_config.env)) {
    if (name === "MALLOC_ARENA_MAX") continue;
    const key = /^\$\{user_config\.(\w+)\}$/.exec(value)?.[1];
    assert.ok(key && key in userConfig, `${name} refers to a user_config key`);
    assert.ok(
      (envNames().includes(name) && envGranted(name)) || PENDING_ENV.includes(name),
      `${name} is read and in the env allowlist`,
    );
  }
  for (const name of PENDING_ENV) {
    assert.ok(!envNames().includes(name), `${name} is read now: remove it from PENDING_ENV`);
  }
  assert.deepEqual(Object.keys(USER_CONFIG), Object.keys(userConfig));
});

Deno.test("release.ts lays out bundles, server.json with each bundle's SHA-256, npm packages and SHA256SUMS", async () => {
  const dist = Deno.makeTempDirSync({ prefix: "opendata-mcp-dist-" });
  try {
    // Stand-ins for the compiled binaries: the layout, not the binaries, is under test here.
    for (const t of RELEASE_TARGETS) Deno.writeTextFileSync(join(dist, t.binary), `binary for ${t.target}\n`);

    const dirs = writeBundles(dist, join(dist, "bundles"));
    assert.equal(dirs.length, 5);
    const identities = dirs.map((d) => JSON.parse(Deno.readTextFileSync(join(d, "manifest.json"))))
      .map((m) => `${m.name} ${m.display_name}`);
    assert.equal(new Set(identities).size, 5, `each bundle names its OS and architecture: ${identities}`);
    for (const [i, t] of RELEASE_TARGETS.entries()) {
      const manifest = JSON.parse(Deno.readTextFileSync(join(dirs[i]!, "manifest.json")));
      const exe = t.os === "win32" ? "opendata-mcp.exe" : "opendata-mcp";
      assert.deepEqual(manifest.compatibility, { platforms: [t.os] });
      // The spec's compatibility has no architecture: the name and display name carry it.
      assert.equal(manifest.name, `opendata-mcp-${t.label}`);
      assert.match(manifest.display_name, new RegExp(` for (Linux|macOS|Windows) ${t.label.split("-")[0]}$`));
      assert.ok(bundleFileName(t).endsWith(`-${t.label}.mcpb`), "the file name says OS and architecture");
      assert.equal(manifest.version, VERSION);
      assert.equal(manifest.server.entry_point, `server/${exe}`);
      assert.equal(manifest.server.mcp_config.command, `\${__dirname}/server/${exe}`);
      assert.equal(manifest.server.mcp_config.platform_overrides, undefined);
      const binary = join(dirs[i]!, "server", exe);
      assert.equal(Deno.readTextFileSync(binary), `binary for ${t.target}\n`);
      if (Deno.build.os !== "windows") assert.equal(Deno.statSync(binary).mode! & 0o111, 0o111, "executable");
    }

    // Stand-ins for the packed bundles (mcpb pack runs on GitHub), then server.json over them.
    for (const t of RELEASE_TARGETS) {
      Deno.writeTextFileSync(join(dist, bundleFileName(t)), `bundle ${t.label}`);
    }
    const json = await writeServerJson(dist, "someone/opendata-mcp", `v${VERSION}`);
    assert.deepEqual(JSON.parse(Deno.readTextFileSync(join(dist, "server.json"))), json);
    assert.equal(json["name"], "io.github.someone/opendata-mcp");
    assert.match(String(json["name"]), /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    assert.ok(String(json["description"]).length <= 100, "the registry caps descriptions at 100 characters");
    assert.equal(json["version"], VERSION);
    const packages = json["packages"] as Record<string, unknown>[];
    assert.deepEqual(packages[0], {
      registryType: "npm",
      identifier: "opendata-mcp",
      version: VERSION,
      transport: { type: "stdio" },
      environmentVariables: packages[0]!["environmentVariables"] as unknown[],
    });
    for (const [i, t] of RELEASE_TARGETS.entries()) {
      const p = packages[i + 1]!;
      assert.equal(p["registryType"], "mcpb");
      assert.equal(
        p["identifier"],
        `https://github.com/someone/opendata-mcp/releases/download/v${VERSION}/opendata-mcp-${VERSION}-${t.label}.mcpb`,
      );
      assert.equal(p["fileSha256"], await sha256(join(dist, bundleFileName(t))));
    }
    const fred = (packages[1]!["environmentVariables"] as Record<string, unknown>[]).find((v) =>
      v["name"] === "FRED_API_KEY"
    );
    assert.equal(fred?.["isSecret"], true);

    const npm = writeNpmPackages(dist, join(dist, "npm"), VERSION);
    for (const [i, t] of RELEASE_TARGETS.entries()) {
      const pkg = JSON.parse(Deno.readTextFileSync(join(npm[i]!, "package.json")));
      assert.equal(pkg.name, npmPlatformPackage(t));
      assert.deepEqual([pkg.os, pkg.cpu, pkg.version], [[t.os], [t.arch], VERSION]);
      const exe = t.os === "win32" ? "opendata-mcp.exe" : "opendata-mcp";
      assert.equal(Deno.readTextFileSync(join(npm[i]!, "bin", exe)), `binary for ${t.target}\n`);
    }
    assert.ok(
      Deno.statSync(join(npm[5]!, "bin", "opendata-mcp.js")).isFile,
      "the launcher package is copied",
    );

    const sums = await writeSha256Sums(dist);
    assert.match(sums, new RegExp(`^[a-f0-9]{64}  ${RELEASE_TARGETS[0]!.binary}$`, "m"));
    assert.match(sums, /^[a-f0-9]{64} {2}server\.json$/m);
    assert.doesNotMatch(sums, /SHA256SUMS/);
  } finally {
    Deno.removeSync(dist, { recursive: true });
  }
});

Deno.test("versionMismatches() accepts the release tag and names each place that disagrees", () => {
  assert.deepEqual(versionMismatches(`v${VERSION}`), []);
  const problems = versionMismatches("v99.0.0");
  assert.equal(problems.length, 4 + RELEASE_TARGETS.length);
  assert.match(problems[0]!, /^lib\/version\.ts VERSION is "0\.\d+\.\d+", the tag says "99\.0\.0"$/);
  assert.ok(problems.some((p) => /^Dockerfile ARG VERSION \(the image's version label\) is /.test(p)));
});

Deno.test("npm/opendata-mcp/package.json: one optional platform package per target, registry name, repository", () => {
  const pkg = readJson("npm/opendata-mcp/package.json");
  assert.equal(pkg["name"], "opendata-mcp");
  assert.equal(pkg["version"], VERSION);
  assert.deepEqual(pkg["bin"], { "opendata-mcp": "bin/opendata-mcp.js" });
  assert.deepEqual(
    pkg["optionalDependencies"],
    Object.fromEntries(RELEASE_TARGETS.map((t) => [npmPlatformPackage(t), VERSION]).toSorted()),
  );
  assert.equal(pkg["mcpName"], registryName(), "the MCP registry checks mcpName against server.json's name");
  // npm provenance checks repository.url against the repository that runs the workflow.
  assert.equal((pkg["repository"] as { url: string }).url, `git+https://github.com/${REPOSITORY}.git`);
});

Deno.test("Dockerfile: pinned Deno images, non-root, EXPOSE 8000, /health check, the start:http task's command", () => {
  const dockerfile = Deno.readTextFileSync(join(ROOT, "Dockerfile"));
  const ciDeno = /^DENO_VERSION=(\S+)$/m.exec(Deno.readTextFileSync(join(ROOT, ".ci/run")))?.[1];
  assert.equal(/^ARG DENO_VERSION=(\S+)$/m.exec(dockerfile)?.[1], ciDeno, "the Deno of .ci/run");
  assert.deepEqual(
    [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]),
    [
      "denoland/deno:${DENO_VERSION}${DENO_BUILD_DIGEST}",
      "denoland/deno:distroless-${DENO_VERSION}${DENO_RUNTIME_DIGEST}",
    ],
  );
  // Each digest is empty (not pinned yet: no registry was reachable) or a whole "@sha256:" digest.
  for (const name of ["DENO_BUILD_DIGEST", "DENO_RUNTIME_DIGEST"]) {
    const value = new RegExp(`^ARG ${name}=(.*)$`, "m").exec(dockerfile)?.[1];
    assert.ok(value !== undefined, `${name} is declared`);
    assert.match(value!, /^(|@sha256:[0-9a-f]{64})$/, `${name} is a digest or empty`);
  }
  const version = /export const VERSION = "([^"]+)"/.exec(Deno.readTextFileSync(join(ROOT, "lib/version.ts")))
    ?.[1];
  assert.equal(
    /^ARG VERSION=(\S+)$/m.exec(dockerfile)?.[1],
    version,
    "the version label is lib/version.ts's",
  );
  assert.match(dockerfile, /org\.opencontainers\.image\.version="\$\{VERSION\}"/);
  assert.match(dockerfile, /^USER 65532:65532$/m);
  assert.match(dockerfile, /^EXPOSE 8000$/m);
  assert.match(dockerfile, /^HEALTHCHECK .*\\\n\s+CMD \[.*http:\/\/127\.0\.0\.1:8000\/health/m);
  const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
  const start = splitStartTask(permissionTasks()["start:http"]!)!;
  for (const [name, value] of Object.entries(start.env)) {
    assert.match(
      dockerfile,
      new RegExp(`^ENV ${name}=${value}$`, "m"),
      `the image sets ${name} as the task does`,
    );
  }
  assert.deepEqual(
    cmd,
    [
      "run",
      ...start.args.slice(0, -1),
      "--cached-only",
      BUNDLE_ENTRY,
      ...start.after,
      "--host",
      "0.0.0.0",
      "--port",
      "8000",
    ],
    "the container runs deno task start:http's command on the bundle its build stage built",
  );
  const ignore = Deno.readTextFileSync(join(ROOT, ".dockerignore")).split("\n").filter((l) =>
    l && !l.startsWith("#")
  );
  assert.deepEqual(
    ignore,
    ["*", "!deno.json", "!deno.lock", "!main.ts", "!lib/", "!tools/", "!config/"],
    ".env stays out, tests and a local bundle/ too: the build stage builds the bundle from the sources",
  );
});

Deno.test("docker-compose.yml: mcp-server on 127.0.0.1:8000 with .env, a restart policy and a Redis profile", () => {
  const compose = parseYaml(Deno.readTextFileSync(join(ROOT, "docker-compose.yml"))) as {
    services: Record<string, Record<string, unknown>>;
  };
  const server = compose.services["mcp-server"]!;
  assert.deepEqual(server["ports"], ["127.0.0.1:8000:8000"], "loopback unless the user publishes it");
  assert.deepEqual(server["env_file"], [{ path: ".env", required: false }]);
  assert.equal(server["restart"], "unless-stopped");
  assert.match(
    String((server["environment"] as Record<string, string>)["MCP_ALLOWED_HOSTS"]),
    /127\.0\.0\.1/,
  );
  const redis = compose.services["redis"]!;
  assert.deepEqual(redis["profiles"], ["replicas"]);
  assert.match(String(redis["image"]), /^redis:\d+\.\d+/);
});

Deno.test("docker-compose.public.yml: publishes beyond loopback only with MCP_AUTH_TOKEN set", () => {
  const text = Deno.readTextFileSync(join(ROOT, "docker-compose.public.yml"));
  // `!override` replaces the base file's ports instead of adding to them (Compose merge rules).
  assert.match(text, /^ {4}ports: !override\n {6}- "\$\{MCP_PUBLISH_ADDRESS:-0\.0\.0\.0\}:8000:8000"$/m);
  // `${VAR:?message}`: Compose refuses to start when the variable is unset or empty.
  assert.match(text, /^ {6}MCP_AUTH_TOKEN: \$\{MCP_AUTH_TOKEN:\?set MCP_AUTH_TOKEN [^}]+\}$/m);
});

Deno.test("the release workflow smoke-tests each target on a runner of its own OS and architecture", () => {
  const workflow = parseYaml(Deno.readTextFileSync(join(ROOT, ".github/workflows/release.yml"))) as {
    jobs: Record<
      string,
      { strategy?: { matrix?: { include?: Record<string, string>[]; target?: string[] } } }
    >;
  };
  const smoke = workflow.jobs["smoke"]?.strategy?.matrix?.include ?? [];
  assert.deepEqual(
    smoke.map((m) => [m["target"], m["runner"], m["binary"]]),
    RELEASE_TARGETS.map((t) => [t.target, t.runner, t.binary]),
  );
  const compile = workflow.jobs["compile"]?.strategy?.matrix?.target ?? [];
  assert.deepEqual(compile, RELEASE_TARGETS.map((t) => t.target));
});

Deno.test("server.json: the committed registry entry is this version's, its bundles told apart by OS and architecture", () => {
  const committed = readJson("server.json");
  assert.deepEqual(
    committed,
    serverJsonTemplate(),
    "stale: run deno run -A tools/release.ts server-json-template",
  );
  assert.ok(
    String(committed["description"]).length <= 100,
    "the registry caps descriptions at 100 characters",
  );
  const packages = committed["packages"] as Record<string, unknown>[];
  const bundles = packages.filter((p) => p["registryType"] === "mcpb");
  assert.equal(bundles.length, RELEASE_TARGETS.length);
  for (const b of bundles) assert.equal(b["fileSha256"], undefined, "the release fills in the hashes");
  const meta = (committed["_meta"] as Record<string, Record<string, unknown>>)[PUBLISHER_META]!;
  assert.equal(meta["license"], "MIT");
  const platforms = meta["platforms"] as Record<string, { os: string; arch: string }>;
  assert.deepEqual(
    bundles.map((b) => platforms[String(b["identifier"])]).map((p) => `${p?.os}-${p?.arch}`),
    RELEASE_TARGETS.map((t) => `${t.os}-${t.arch}`),
  );
  assert.equal(new Set(bundles.map((b) => b["identifier"])).size, bundles.length, "one file per platform");
});

Deno.test("LICENSE is MIT, and every package.json, manifest.json and server.json say so", () => {
  assert.match(Deno.readTextFileSync(join(ROOT, "LICENSE")), /^MIT License\n\nCopyright \(c\) \d{4} /);
  assert.equal(readJson("npm/opendata-mcp/package.json")["license"], "MIT");
  assert.equal(readJson("manifest.json")["license"], "MIT");
  for (const t of RELEASE_TARGETS) assert.equal(npmPlatformPackageJson(t, VERSION)["license"], "MIT");
  const meta = (readJson("server.json")["_meta"] as Record<string, Record<string, unknown>>)[PUBLISHER_META];
  assert.equal(meta?.["license"], "MIT");
});

Deno.test("releaseNotes() returns CHANGELOG.md's section of a version and refuses a version without one", () => {
  const changelog =
    "# Changelog\n\n## [Unreleased]\n\n- next\n\n## [1.2.0] - 2026-12-01\n\n### Added\n\n- a\n\n" +
    "## [1.1.0] - 2026-11-01\n\n- b\n";
  assert.equal(releaseNotes("1.2.0", changelog), "### Added\n\n- a");
  assert.equal(releaseNotes("1.1.0", changelog), "- b");
  assert.throws(() => releaseNotes("1.3.0", changelog), /no section "## \[1\.3\.0\] - YYYY-MM-DD"/);
  assert.throws(() => releaseNotes("1.2", changelog), /no section/, "1.2 is not 1.2.0");
  assert.throws(() => releaseNotes("2.0.0", "## [2.0.0] - 2026-12-02\n\n## [1.0.0]\n"), /is empty/);
  const real = Deno.readTextFileSync(join(ROOT, "CHANGELOG.md"));
  assert.match(real, /^## \[Unreleased\]$/m, "Keep a Changelog's Unreleased section");
});

Deno.test("release.ts notes writes CHANGELOG.md's section of lib/version.ts's VERSION, the notes a tag of it gets", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "opendata-mcp-notes-" });
  try {
    const out = join(dir, "release-notes.md");
    // As release.yml runs it for a tag vX.Y.Z.
    const run = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-config",
        "--allow-read",
        "--allow-write",
        "tools/release.ts",
        "notes",
        `v${VERSION}`,
        out,
      ],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
    const notes = Deno.readTextFileSync(out);
    const changelog = Deno.readTextFileSync(join(ROOT, "CHANGELOG.md"));
    assert.equal(notes, `${releaseNotes(VERSION, changelog)}\n`);
    assert.match(
      changelog,
      new RegExp(`^## \\[${VERSION.replaceAll(".", "\\.")}\\] - \\d{4}-\\d{2}-\\d{2}$`, "m"),
    );
    assert.match(notes, /^### Added$/m, "the released version's own notes");
    assert.doesNotMatch(notes, /^## /m, "one section only");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("the release workflow pins mcp-publisher and can be re-run for a version already published", () => {
  const text = Deno.readTextFileSync(join(ROOT, ".github/workflows/release.yml"));
  assert.match(text, /^ {2}MCP_PUBLISHER_VERSION: v\d+\.\d+\.\d+$/m);
  assert.match(text, /^ {2}MCP_PUBLISHER_SHA256: [0-9a-f]{64}$/m);
  assert.doesNotMatch(text, /releases\/latest/, "no download of whatever is latest");
  const check = text.indexOf("sha256sum --check --strict");
  assert.ok(
    check > 0 && check < text.indexOf("./mcp-publisher login"),
    "the archive is checked before it runs",
  );
  assert.match(text, /npm view "\$\{name\}@\$\{version\}" version/, "npm: published versions are skipped");
  assert.match(text, /gh release view "\$GITHUB_REF_NAME"/, "an existing GitHub release is updated");
  assert.match(text, /\/v0\.1\/servers\/.*\/versions\//, "the registry is asked before publishing");
  assert.match(text, /release\.ts notes "\$GITHUB_REF_NAME" release-notes\.md/);
  assert.match(text, /--notes-file notes\/release-notes\.md/);
  assert.doesNotMatch(text, /--generate-notes/);
});

Deno.test("splitStartTask() separates the variables a start task sets from its deno run arguments and entry", () => {
  assert.deepEqual(splitStartTask("MALLOC_ARENA_MAX=1 A_B= deno run -q -P main.ts"), {
    env: { MALLOC_ARENA_MAX: "1", A_B: "" },
    args: ["-q", "-P", "main.ts"],
    entry: "main.ts",
    after: [],
  });
  assert.deepEqual(splitStartTask("deno run main.ts"), {
    env: {},
    args: ["main.ts"],
    entry: "main.ts",
    after: [],
  });
  assert.deepEqual(splitStartTask("deno run -q main.ts serve --transport http")?.after, [
    "serve",
    "--transport",
    "http",
  ]);
  assert.equal(splitStartTask("deno run -q other.ts"), undefined);
  assert.equal(splitStartTask("deno run -q bundle/main.js"), undefined, "a start runs the sources");
  assert.equal(splitStartTask("deno eval main.ts"), undefined);
  assert.equal(splitStartTask("lower=1 deno run main.ts"), undefined, "only NAME=value words are variables");
  const start = splitStartTask(permissionTasks()["start"]!)!;
  assert.deepEqual(start.env, { ...START_ENV }, "deno task start sets START_ENV");
  assert.equal(start.entry, "main.ts", "deno task start runs the sources");
  assert.equal(splitStartTask(permissionTasks()["dev"]!)?.entry, "main.ts", "deno task dev runs the sources");
  // start:http is start serving HTTP: the same variables and flags but the V8 flags of a shared server.
  const http = splitStartTask(permissionTasks()["start:http"]!)!;
  assert.deepEqual(http.env, start.env);
  assert.deepEqual(http.args.filter((a) => a !== HTTP_V8_FLAGS), start.args.filter((a) => a !== V8_FLAGS));
  assert.ok(http.args.includes(HTTP_V8_FLAGS) && start.args.includes(V8_FLAGS));
  assert.deepEqual(http.after, ["serve", "--transport", "http"]);
});
