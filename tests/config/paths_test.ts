import assert from "node:assert/strict";
import { configCandidates, PROJECT_CONFIG, userConfigPath, userDataDir } from "../../lib/config/paths.ts";

Deno.test("userConfigPath() follows each platform's convention", () => {
  assert.equal(userConfigPath({ HOME: "/home/a" }, "linux"), "/home/a/.config/opendata-mcp/config.yaml");
  assert.equal(
    userConfigPath({ HOME: "/home/a", XDG_CONFIG_HOME: "/x" }, "linux"),
    "/x/opendata-mcp/config.yaml",
  );
  assert.equal(
    userConfigPath({ HOME: "/Users/a" }, "darwin"),
    "/Users/a/Library/Application Support/opendata-mcp/config.yaml",
  );
  assert.equal(
    userConfigPath({ APPDATA: "C:\\Users\\a\\AppData\\Roaming" }, "windows"),
    "C:\\Users\\a\\AppData\\Roaming\\opendata-mcp\\config.yaml",
  );
  assert.equal(userConfigPath({}, "linux"), undefined);
});

Deno.test("userDataDir() never points at the working directory", () => {
  assert.equal(userDataDir({ HOME: "/home/a" }, "linux"), "/home/a/.local/share/opendata-mcp");
  assert.equal(userDataDir({ HOME: "/h", XDG_DATA_HOME: "/d" }, "linux"), "/d/opendata-mcp");
  assert.equal(userDataDir({ LOCALAPPDATA: "C:\\L" }, "windows"), "C:\\L\\opendata-mcp");
});

Deno.test("configCandidates() looks for --config, then OPENDATA_MCP_CONFIG, then ./config/apis.yaml, then the per-user file", () => {
  const env = { HOME: "/home/a", OPENDATA_MCP_CONFIG: "/etc/od.yaml" };
  assert.deepEqual(configCandidates({ flag: "x.yaml", env, os: "linux", projectConfig: PROJECT_CONFIG }), [
    { path: "x.yaml", origin: "--config", required: true },
  ]);
  assert.deepEqual(configCandidates({ env, os: "linux", projectConfig: PROJECT_CONFIG }), [
    { path: "/etc/od.yaml", origin: "OPENDATA_MCP_CONFIG", required: true },
  ]);
  assert.deepEqual(
    configCandidates({ env: { HOME: "/home/a" }, os: "linux", projectConfig: PROJECT_CONFIG }),
    [
      { path: "config/apis.yaml", origin: "working directory", required: false },
      { path: "/home/a/.config/opendata-mcp/config.yaml", origin: "per-user file", required: false },
    ],
  );
});

Deno.test("configCandidates() skips ./config/apis.yaml for compiled binaries and an empty OPENDATA_MCP_CONFIG", () => {
  assert.deepEqual(configCandidates({ env: { HOME: "/h", OPENDATA_MCP_CONFIG: "" }, os: "linux" }), [
    { path: "/h/.config/opendata-mcp/config.yaml", origin: "per-user file", required: false },
  ]);
  assert.deepEqual(configCandidates({ env: {}, os: "linux" }), []);
});
