// What the clients' projects of one storage root hold, read from the disk: for the global caps
// (the client holding the most gives way first), the stale-project reclaim and the start-up count
// of the quota. Only projects of HTTP clients are considered, `{root}/_owners/{hash}/{project}`
// with a client hash in `.project.json`: a stdio user's projects (directly under the root) are
// that user's own files and never removed.
import * as nodePath from "node:path";

/** One client project on disk. */
export interface ClientProject {
  /** Absolute folder. */
  path: string;
  /** The client hash its `.project.json` names. */
  client: string;
  /** Bytes in 4 KiB blocks, folders included. */
  bytes: number;
  /** Last change (ms): the newest of its files' and folders' times and its recorded `updated`. */
  touched: number;
}

/** What one client holds in a storage. */
export interface Holding {
  projects: number;
  bytes: number;
}

const HASH = /^[0-9a-f]{32}$/;
const PROJECT = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const BLOCK = 4096;

async function folders(path: string, pattern: RegExp): Promise<string[]> {
  try {
    const out: string[] = [];
    for await (const e of Deno.readDir(path)) if (e.isDirectory && pattern.test(e.name)) out.push(e.name);
    return out;
  } catch {
    return [];
  }
}

/** The client and `updated` time a `.project.json` records, when it is readable. */
async function metaOf(dir: string): Promise<{ client?: string; updated: number }> {
  try {
    const value = JSON.parse(await Deno.readTextFile(nodePath.join(dir, ".project.json")));
    const client = typeof value?.client === "string" && HASH.test(value.client) ? value.client : undefined;
    const updated = typeof value?.updated === "string" ? Date.parse(value.updated) : NaN;
    return { ...(client ? { client } : {}), updated: Number.isFinite(updated) ? updated : 0 };
  } catch {
    return { updated: 0 };
  }
}

/** Blocks and newest time under `dir` (symbolic links are not followed). */
async function usage(dir: string, depth = 0): Promise<{ bytes: number; touched: number }> {
  let bytes = BLOCK;
  let touched = 0;
  try {
    touched = (await Deno.lstat(dir)).mtime?.getTime() ?? 0;
    for await (const e of Deno.readDir(dir)) {
      const path = nodePath.join(dir, e.name);
      if (e.isDirectory && depth < 6) {
        const inner = await usage(path, depth + 1);
        bytes += inner.bytes;
        touched = Math.max(touched, inner.touched);
      } else if (e.isFile) {
        const info = await Deno.lstat(path).catch(() => undefined);
        if (!info) continue;
        bytes += Math.max(1, Math.ceil(info.size / BLOCK)) * BLOCK;
        touched = Math.max(touched, info.mtime?.getTime() ?? 0);
      }
    }
  } catch {
    // Removed meanwhile.
  }
  return { bytes, touched };
}

/** Every client project under `root`. */
export async function clientProjects(root: string): Promise<ClientProject[]> {
  const owners = nodePath.join(root, "_owners");
  const out: ClientProject[] = [];
  for (const owner of await folders(owners, HASH)) {
    const base = nodePath.join(owners, owner);
    for (const name of await folders(base, PROJECT)) {
      const path = nodePath.join(base, name);
      const meta = await metaOf(path);
      if (meta.client === undefined) continue;
      const used = await usage(path);
      out.push({
        path,
        client: meta.client,
        bytes: used.bytes,
        touched: Math.max(used.touched, meta.updated),
      });
    }
  }
  return out;
}

/** What each client holds among `projects`. */
export function holdings(projects: readonly ClientProject[]): Map<string, Holding> {
  const out = new Map<string, Holding>();
  for (const p of projects) {
    const h = out.get(p.client) ?? { projects: 0, bytes: 0 };
    h.projects += 1;
    h.bytes += p.bytes;
    out.set(p.client, h);
  }
  return out;
}

/**
 * The project to give way when a global cap is reached and `client` asks for more: the least
 * recently touched project of the clients holding the most (by `kind`), when they hold more than
 * `client` does; else undefined (the asker holds the most, and is refused). `busy` tells a
 * project being written into, which is not taken.
 */
export function toEvict(
  projects: readonly ClientProject[],
  client: string,
  kind: keyof Holding,
  busy: (path: string) => boolean,
): ClientProject | undefined {
  const held = holdings(projects);
  const mine = held.get(client)?.[kind] ?? 0;
  const most = Math.max(0, ...[...held.values()].map((h) => h[kind]));
  if (most <= mine) return undefined;
  return projects
    .filter((p) => held.get(p.client)![kind] === most && !busy(p.path))
    .sort((a, b) => a.touched - b.touched)[0];
}

/** Removes `projects` (client project folders found by {@linkcode clientProjects}); how many went. */
export async function removeProjects(projects: readonly ClientProject[]): Promise<number> {
  let removed = 0;
  for (const p of projects) {
    try {
      await Deno.remove(p.path, { recursive: true });
      removed++;
    } catch {
      // Gone already, or not ours to remove.
    }
  }
  return removed;
}
