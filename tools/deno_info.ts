// `deno info --json` of an entry module: the module graph the bundle's notice, the release compile,
// the binary test and the layer test read, from one place.

const ROOT = new URL("../", import.meta.url).pathname;

/**
 * The parsed `deno info --json` of `entry` (a path, relative to `cwd`, default the repository),
 * or an error with deno's own message.
 */
export async function denoInfo<T>(entry: string, cwd: string = ROOT): Promise<T> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  if (!out.success) {
    throw new Error(`deno info --json ${entry} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return JSON.parse(new TextDecoder().decode(out.stdout)) as T;
}
