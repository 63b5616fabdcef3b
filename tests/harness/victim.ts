// A victim next to an attack: while one client's call makes the server do something costly, this
// one polls /health and calls example-ping on a session of its own, and says how long each took.
// Used by the work-budget tests (tests/e2e/work_budget_test.ts) and `deno task hostile`.
import type { Client } from "./sdk_client.ts";

/** The `p` quantile of `xs` (0 when empty). */
export function pct(xs: number[], p: number): number {
  if (xs.length === 0) return 0;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/**
 * Polls /health and calls example-ping as the victim until `attack` settles; the attacker's
 * time and the victim's latencies.
 */
export async function withVictim(
  origin: string,
  victim: Client,
  attack: () => Promise<string>,
): Promise<{ attacker: string; attackMs: number; health: number[]; ping: number[] }> {
  const health: number[] = [];
  const ping: number[] = [];
  let done = false;
  // Two probes of their own, so a stalled call does not hide how /health fares (and back).
  const poll = Promise.all([
    (async () => {
      while (!done) {
        const t = performance.now();
        const res = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(120_000) });
        await res.body?.cancel();
        health.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 20));
      }
    })(),
    (async () => {
      while (!done) {
        const t = performance.now();
        await victim.callTool({ name: "example-ping", arguments: {} }, undefined, { timeout: 120_000 });
        ping.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 20));
      }
    })(),
  ]);
  const t0 = performance.now();
  const attacker = await attack();
  const attackMs = performance.now() - t0;
  done = true;
  await poll;
  return { attacker, attackMs, health, ping };
}
