// The release binary's figures (docs/BENCHMARKS.md): what each compile embeds (the payload `deno compile`
// adds to the runtime, read from binaries written with DENORT_BIN set to this deno), beside a minimal SDK v2
// server compiled the same ways, and the start-up of the binary's stand-in (its embedded files run with `deno
// run`) beside `deno task start`'s.
import { join } from "node:path";
import { compile } from "../compile.ts";
import { prepareStandIn, readEmbedded } from "../embedded.ts";
import { interleavedStarts, loadAverage, pairedRatios, thisServer } from "./startup.ts";
import type { ServerCommand, Spread } from "./startup.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const MB = (bytes: number): string => `${(bytes / 1e6).toFixed(2)} MB`;

/** Compiles `entry` with plain `deno compile` and `flags`; the payload in bytes. */
async function plainCompile(entry: string, output: string, flags: string[]): Promise<number> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["compile", "-q", ...flags, "--output", output, entry],
    cwd: ROOT,
    env: { DENORT_BIN: Deno.execPath(), NO_COLOR: "1" },
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return readEmbedded(Deno.readFileSync(output)).payloadBytes;
}

/** The section's markdown: the payload table, the start-up table and notes. */
export async function benchBinary(startRuns: number): Promise<string> {
  const dir = Deno.makeTempDirSync({ prefix: "opendata-mcp-bench-binary-" });
  try {
    const env = { DENORT_BIN: Deno.execPath() };
    const ours = join(dir, "ours");
    await compile(Deno.build.target, ours, { env });
    const embedded = readEmbedded(Deno.readFileSync(ours));
    const minimalRelease = readEmbedded(
      Deno.readFileSync(
        await compile(Deno.build.target, join(dir, "minimal"), {
          env,
          entry: "tools/bench/minimal_server.ts",
        }),
      ),
    ).payloadBytes;
    const minimalUnused = await plainCompile("tools/bench/minimal_server.ts", join(dir, "minimal-unused"), [
      "--node-modules-dir=none",
      "--exclude-unused-npm",
    ]);
    const minimalPlain = await plainCompile("tools/bench/minimal_server.ts", join(dir, "minimal-plain"), []);
    const oursPlain = await plainCompile("main.ts", join(dir, "ours-plain"), []);
    const ratio = (b: number) => `${(embedded.payloadBytes / b).toFixed(2)}×`;
    const rows = [
      "| Payload `deno compile` adds to the runtime | Bytes | This server's release payload against it |",
      "| --- | --- | --- |",
      `| this server, release compile (tools/compile.ts) | ${MB(embedded.payloadBytes)} | 1.00× |`,
      `| this server, plain \`deno compile\` (whole node_modules) | ${MB(oursPlain)} | ${ratio(oursPlain)} |`,
      `| minimal SDK server, \`--node-modules-dir=none --exclude-unused-npm\` | ${MB(minimalUnused)} | ${
        ratio(minimalUnused)
      } |`,
      `| minimal SDK server, plain \`deno compile\` | ${MB(minimalPlain)} | ${ratio(minimalPlain)} |`,
      `| minimal SDK server, release compile (same trimming) | ${MB(minimalRelease)} | ${
        ratio(minimalRelease)
      } |`,
    ];

    const standIn = prepareStandIn(embedded, join(dir, "stand-in"), ROOT);
    const start = thisServer("this server, `deno task start`");
    const binary: ServerCommand = {
      label: "the release binary's stand-in (its embedded files, `deno run`)",
      cmd: [Deno.execPath(), ...standIn.runArgs, standIn.main],
      env: { DENO_DIR: standIn.denoDir },
    };
    // The stand-in's DENO_DIR is its npm cache; a first start fills its transpile cache there.
    const load = loadAverage();
    const { starts } = await interleavedStarts([start, binary], startRuns);
    const a = starts.get(start.label)!;
    const b = starts.get(binary.label)!;
    const range = (s: Spread) => `${s.median.toFixed(0)} ms (${s.min.toFixed(0)}–${s.max.toFixed(0)})`;
    rows.push(
      "",
      "| Start-up to tools/list answered | Median (min–max) | Against `deno task start`, paired by round | RSS after start |",
      "| --- | --- | --- | --- |",
      `| ${start.label} | ${range(a.ms)} | 1.00× | ${a.rss.median.toFixed(1)} MiB |`,
      `| ${binary.label} | ${range(b.ms)} | ${pairedRatios(b.rounds, a.rounds).median.toFixed(2)}× | ${
        b.rss.median.toFixed(1)
      } MiB |`,
    );
    const notes = [
      `Payload target: ≤ 1.0× a minimal SDK v2 server compiled with \`--node-modules-dir=none --exclude-unused-npm\` (which comes to 14 MB): ${
        ratio(minimalUnused)
      }. The minimal server put through the same trimming (no declarations, maps, sources or docs of packages) is smaller still: this server's payload is ${
        ratio(minimalRelease)
      } of that, the cost of @redis/client, js-yaml, two tokenizer encodings (${
        MB(
          embedded.entries.filter((e) => e.path.includes("/gpt-tokenizer/")).reduce((n, e) => n + e.size, 0),
        )
      }) and our code (the start bundle).`,
      `Start-up: ${startRuns} starts of each, interleaved, after two unmeasured starts each; load average ${load} when it began. The stand-in runs the embedded start bundle with \`deno run --unstable-lazy-dynamic-imports\` (a binary loads a module when it is imported), so it shows what the embedded files cost, not denort's own start (which only a real binary on GitHub's runners shows).`,
    ];
    return `## The release binary

Written by \`deno task bench --only binary\` (tools/bench/binary.ts). Binaries are written with \`DENORT_BIN\`
set to this deno (this machine cannot download denort); the payload is the same a release build embeds.

${rows.join("\n")}

${notes.map((n) => `- ${n}`).join("\n")}`;
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}
