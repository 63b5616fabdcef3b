import { interleavedStarts, pairedRatios, thisServer } from "./startup.ts";
const runs = Number(Deno.args[0] ?? 15);
const ours = thisServer("ours");
const { call: _, ...minimal } = thisServer("minimal", [], {}, "tools/bench/minimal_server.ts");
const { starts } = await interleavedStarts([ours, minimal], runs);
const a = starts.get("ours")!, b = starts.get("minimal")!;
const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
console.log(
  "cpu ours",
  med(a.cpuRounds).toFixed(1),
  "minimal",
  med(b.cpuRounds).toFixed(1),
  "paired",
  JSON.stringify(pairedRatios(a.cpuRounds, b.cpuRounds)),
);
console.log("wall paired", JSON.stringify(pairedRatios(a.rounds, b.rounds)));
