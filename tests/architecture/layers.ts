// The import rules of docs/ARCHITECTURE.md ("Layers"), as data, and a checker over a module graph
// (`deno info --json` of the shipped entry point). Pure functions: layers_test.ts feeds them the
// real graph and small hand-made ones that must fail.

/** One layer: the modules it holds (path prefixes from the repository root) and what it may import. */
export interface Layer {
  name: string;
  /** Path prefixes ("lib/geo/") or exact files ("lib/log.ts"); the longest match decides. */
  paths: readonly string[];
  /** Layers its modules may import, besides their own. */
  mayImport: readonly string[];
}

/** The layer of each provider folder, `lib/providers/<id>/`: its own layer per provider. */
export const PROVIDER_LAYER = "provider";

/** Bottom to top. Keep in step with the table at the top of docs/ARCHITECTURE.md. */
export const LAYERS: readonly Layer[] = [
  {
    name: "base",
    paths: [
      "lib/errors.ts",
      "lib/log.ts",
      "lib/secrets.ts",
      "lib/clock.ts",
      "lib/deadline_wheel.ts",
      "lib/html.ts",
      "lib/markup.ts",
      "lib/version.ts",
      "lib/bearer_auth.ts",
      "lib/config/server_settings.ts",
    ],
    mayImport: [],
  },
  { name: "geo", paths: ["lib/geo/"], mayImport: ["base"] },
  { name: "metrics", paths: ["lib/metrics/"], mayImport: ["base"] },
  { name: "http", paths: ["lib/http/"], mayImport: ["base", "metrics"] },
  { name: "protocol", paths: ["lib/mcp/sdk.ts", "lib/mcp/protocol.ts"], mayImport: ["base"] },
  { name: "output", paths: ["lib/output/"], mayImport: ["base", "metrics", "http", "protocol"] },
  { name: "mcp", paths: ["lib/mcp/"], mayImport: ["base", "metrics", "http", "protocol", "output"] },
  {
    name: "config",
    paths: ["lib/config/"],
    mayImport: ["base", "metrics", "http", "protocol", "output", "mcp"],
  },
  {
    name: "redis",
    paths: ["lib/redis/"],
    mayImport: ["base", "metrics", "http", "protocol", "output", "mcp", "config"],
  },
  {
    name: PROVIDER_LAYER,
    paths: ["lib/providers/"],
    mayImport: ["base", "geo", "metrics", "http", "protocol", "output", "mcp", "config"],
  },
  {
    name: "root",
    paths: [
      "main.ts",
      "lib/app.ts",
      "lib/app_stores.ts",
      "lib/cli.ts",
      "lib/providers/registry.ts",
      "lib/providers/listings.json",
    ],
    mayImport: [
      "base",
      "geo",
      "metrics",
      "http",
      "protocol",
      "output",
      "mcp",
      "config",
      "redis",
      PROVIDER_LAYER,
    ],
  },
];

/** A module graph: repository-relative path -> the repository modules it imports. */
export type Graph = ReadonlyMap<string, readonly string[]>;

/** The repository's own modules and their imports (static, dynamic and type-only) from `deno info --json`. */
export function graphFromDenoInfo(info: unknown, rootUrl: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const modules = (info as { modules?: { specifier: string; dependencies?: unknown[] }[] }).modules ?? [];
  const local = (specifier: unknown) =>
    typeof specifier === "string" && specifier.startsWith(rootUrl) ? specifier.slice(rootUrl.length) : null;
  for (const m of modules) {
    const from = local(m.specifier);
    if (from === null) continue;
    const to = new Set<string>();
    for (const dep of m.dependencies ?? []) {
      const d = dep as { code?: { specifier?: string }; type?: { specifier?: string } };
      for (const target of [local(d.code?.specifier), local(d.type?.specifier)]) {
        if (target !== null && target !== from) to.add(target);
      }
    }
    out.set(from, [...to].sort());
  }
  return out;
}

/** The layer of `path` and, for a provider, which one ("provider:fred"); null when no layer holds it. */
export function layerOf(
  path: string,
  layers: readonly Layer[] = LAYERS,
): { layer: Layer; unit: string } | null {
  let best: { layer: Layer; length: number } | null = null;
  for (const layer of layers) {
    for (const p of layer.paths) {
      const hit = p.endsWith("/") ? path.startsWith(p) : path === p;
      if (hit && (!best || p.length > best.length)) best = { layer, length: p.length };
    }
  }
  if (!best) return null;
  if (best.layer.name !== PROVIDER_LAYER) return { layer: best.layer, unit: best.layer.name };
  const id = /^lib\/providers\/([^/]+)\//.exec(path)?.[1];
  return { layer: best.layer, unit: id ? `${PROVIDER_LAYER}:${id}` : PROVIDER_LAYER };
}

/** The import circles (strongly connected components of two or more modules, or a self-import), each sorted. */
export function importCycles(graph: Graph): string[][] {
  // Tarjan's algorithm, iterative so a deep graph cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; edges: readonly string[]; i: number }[] = [];
    const open = (node: string) => {
      index.set(node, next);
      low.set(node, next++);
      stack.push(node);
      onStack.add(node);
      work.push({ node, edges: graph.get(node) ?? [], i: 0 });
    };
    open(start);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      if (top.i < top.edges.length) {
        const to = top.edges[top.i++]!;
        if (!index.has(to)) open(to);
        else if (onStack.has(to)) low.set(top.node, Math.min(low.get(top.node)!, index.get(to)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(top.node)!));
      if (low.get(top.node) !== index.get(top.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== top.node);
      const selfImport = (graph.get(top.node) ?? []).includes(top.node);
      if (component.length > 1 || selfImport) cycles.push(component.sort());
    }
  }
  return cycles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** One import that breaks the layer rules, and why. */
export interface Violation {
  from: string;
  to: string;
  reason: string;
}

/** Every import of `graph` that breaks the rules of `layers`; modules outside `scope` are not checked. */
export function layerViolations(
  graph: Graph,
  layers: readonly Layer[] = LAYERS,
  scope: (path: string) => boolean = (p) => p === "main.ts" || p.startsWith("lib/"),
): Violation[] {
  const out: Violation[] = [];
  for (const [from, targets] of graph) {
    if (!scope(from)) continue;
    const a = layerOf(from, layers);
    if (!a) {
      out.push({ from, to: "", reason: `${from} is in no layer: add it to LAYERS and docs/ARCHITECTURE.md` });
      continue;
    }
    for (const to of targets) {
      if (!scope(to)) continue;
      const b = layerOf(to, layers);
      if (!b) {
        out.push({ from, to, reason: `${to} is in no layer: add it to LAYERS and docs/ARCHITECTURE.md` });
      } else if (a.layer.name === PROVIDER_LAYER && b.layer.name === PROVIDER_LAYER && a.unit !== b.unit) {
        out.push({ from, to, reason: `provider imports another provider (${a.unit} -> ${b.unit})` });
      } else if (
        b.layer.name === PROVIDER_LAYER && a.layer.name !== PROVIDER_LAYER && a.layer.name !== "root"
      ) {
        out.push({
          from,
          to,
          reason: `core layer ${a.layer.name} imports a provider (only the registry may)`,
        });
      } else if (a.layer.name !== b.layer.name && !a.layer.mayImport.includes(b.layer.name)) {
        out.push({ from, to, reason: `${a.layer.name} may not import ${b.layer.name}` });
      }
    }
  }
  return out.sort((x, y) => `${x.from} ${x.to}`.localeCompare(`${y.from} ${y.to}`));
}

/** One line per violation, for a failure message. */
export function describeViolations(violations: readonly Violation[]): string {
  return violations.map((v) => `${v.from} -> ${v.to || "(module)"}: ${v.reason}`).join("\n");
}
