import assert from "node:assert/strict";
import { userConfigPath, userDataDir } from "../../lib/config/paths.ts";

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
