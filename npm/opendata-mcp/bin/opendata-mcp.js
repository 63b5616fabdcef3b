#!/usr/bin/env node
// `npx opendata-mcp`: runs the prebuilt binary for this platform with the same arguments, stdio
// and exit code, and passes termination signals on to it.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import process from "node:process";
import { binaryEnv, binaryPath, detectLibc } from "../lib/platform.js";

let bin;
try {
  bin = binaryPath({
    platform: process.platform,
    arch: process.arch,
    libc: detectLibc(process),
    env: process.env,
    resolve: createRequire(import.meta.url).resolve,
  });
} catch (e) {
  process.stderr.write(`opendata-mcp: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}

const child = spawn(bin, process.argv.slice(2), {
  stdio: "inherit",
  windowsHide: true,
  env: binaryEnv(process.env, process.platform),
});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (e) => {
  process.stderr.write(`opendata-mcp: cannot run "${bin}": ${e.message}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
