// Reads what `deno compile` embedded in a binary: its metadata and the files of its virtual file
// system, and extracts those files into a folder (a stand-in for the binary: `deno run` from
// them runs exactly the code the binary holds).
//
//   deno run --allow-read --allow-write tools/embedded.ts list BINARY
//   deno run --allow-read --allow-write tools/embedded.ts extract BINARY FOLDER
//
// The payload (Deno 2.9) sits between two "d3n0l4nd" markers: after the first come
// length-prefixed sections (u64 little-endian length, then the bytes): the metadata (JSON), the
// npm snapshot, the remote modules, then the virtual file system's directory tree (JSON) and its
// file data, the last two sections before the closing marker. A file entry's "o" is the
// [offset, length] of its original bytes in the file data.
import { BUNDLE_ENTRY } from "./bundle.ts";

const MAGIC = new TextEncoder().encode("d3n0l4nd");

/** One embedded file or symlink, by its path relative to the file system's root. */
export interface EmbeddedEntry {
  path: string;
  /** Bytes of the original file (0 for a symlink). */
  size: number;
  /** A symlink's target, relative to the root. */
  link?: string;
}

/** What a compiled binary holds. */
export interface Embedded {
  metadata: Record<string, unknown>;
  entries: EmbeddedEntry[];
  /** Bytes from the opening to the end of the closing marker: what the binary adds to the runtime. */
  payloadBytes: number;
  /** The original bytes of the file at `path`. */
  read(path: string): Uint8Array;
}

interface VfsDir {
  Dir: { n: string; e: VfsEntry[] };
}
interface VfsFile {
  File: { n: string; o: [number, number] };
}
interface VfsSymlink {
  Symlink: { n: string; p: string[] };
}
type VfsEntry = VfsDir | VfsFile | VfsSymlink;

/** Parses the payload of a binary `deno compile` wrote; throws when it has none. */
export function readEmbedded(binary: Uint8Array): Embedded {
  const view = new DataView(binary.buffer, binary.byteOffset, binary.byteLength);
  const isMagic = (i: number) => binary[i] === MAGIC[0] && MAGIC.every((m, j) => binary[i + j] === m);
  const u64 = (i: number) => view.getUint32(i, true) + view.getUint32(i + 4, true) * 2 ** 32;
  let end = binary.length - MAGIC.length;
  while (end >= 0 && !isMagic(end)) end--;
  if (end < 0) throw new Error("No deno compile payload: the closing marker is missing");
  // The opening marker is followed by the metadata's length and its JSON ("{").
  let start = end - 1;
  while (start >= 0 && !(isMagic(start) && binary[start + 16] === 0x7b)) start--;
  if (start < 0) throw new Error("No deno compile payload: the opening marker is missing");
  let at = start + MAGIC.length;
  const metadataLength = u64(at);
  const metadata = JSON.parse(new TextDecoder().decode(binary.subarray(at + 8, at + 8 + metadataLength)));
  at += 8 + metadataLength;
  at += 8 + u64(at); // the npm snapshot
  // Then the remote modules, whose layout varies; the tree is the section ("[" JSON) whose
  // successor, the file data, ends exactly at the closing marker.
  let tree = -1;
  for (let i = at; i + 16 <= end; i++) {
    if (binary[i + 8] !== 0x5b) continue;
    const data = i + 8 + u64(i);
    if (data + 8 <= end && data + 8 + u64(data) === end) {
      tree = i;
      break;
    }
  }
  if (tree < 0) throw new Error("No virtual file system found before the closing marker");
  const treeEnd = tree + 8 + u64(tree);
  const dataStart = treeEnd + 8;
  const root = JSON.parse(new TextDecoder().decode(binary.subarray(tree + 8, treeEnd))) as VfsEntry[];
  const entries: EmbeddedEntry[] = [];
  const files = new Map<string, [number, number]>();
  const walk = (list: VfsEntry[], prefix: string) => {
    for (const e of list) {
      if ("Dir" in e) walk(e.Dir.e, `${prefix}${e.Dir.n}/`);
      else if ("File" in e) {
        entries.push({ path: prefix + e.File.n, size: e.File.o[1] });
        files.set(prefix + e.File.n, e.File.o);
      } else if ("Symlink" in e) {
        entries.push({ path: prefix + e.Symlink.n, size: 0, link: e.Symlink.p.join("/") });
      }
    }
  };
  walk(root, "");
  return {
    metadata,
    entries,
    payloadBytes: end + MAGIC.length - start,
    read(path) {
      const o = files.get(path);
      if (!o) throw new Error(`Not embedded: ${path}`);
      return binary.subarray(dataStart + o[0], dataStart + o[0] + o[1]);
    },
  };
}

/** Writes every embedded file and symlink under `folder`; returns what it wrote. */
export function extractEmbedded(embedded: Embedded, folder: string): EmbeddedEntry[] {
  for (const entry of embedded.entries) {
    const path = `${folder}/${entry.path}`;
    Deno.mkdirSync(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    if (entry.link !== undefined) Deno.symlinkSync(`${folder}/${entry.link}`, path);
    else Deno.writeFileSync(path, embedded.read(entry.path));
  }
  return embedded.entries;
}

if (import.meta.main) {
  const [command, binary, folder] = Deno.args;
  if (!binary || (command !== "list" && command !== "extract") || (command === "extract" && !folder)) {
    console.error("usage: embedded.ts list BINARY | embedded.ts extract BINARY FOLDER");
    Deno.exit(2);
  }
  const embedded = readEmbedded(Deno.readFileSync(binary));
  if (command === "list") {
    for (const e of embedded.entries) console.log(`${e.size}\t${e.path}${e.link ? ` -> ${e.link}` : ""}`);
    console.log(`payload: ${embedded.payloadBytes} bytes, ${embedded.entries.length} files`);
  } else {
    extractEmbedded(embedded, folder!);
    console.log(`extracted ${embedded.entries.length} files into ${folder}`);
  }
}

/** A folder to run the embedded files from, as `deno run` would run the binary. */
export interface StandIn {
  /** The extracted entry the binary was compiled from (bundle/main.js, as the container runs it). */
  main: string;
  /** The DENO_DIR whose npm cache holds exactly the embedded packages. */
  denoDir: string;
  /** `deno run` arguments before the entry: the binary's permission set, no download, no other cache. */
  runArgs: string[];
  root: string;
}

/**
 * Extracts `embedded` into `folder` to run from: the code at its paths, the npm packages as a
 * DENO_DIR npm cache, and deno.json/deno.lock (`configDir`'s) narrowed to those packages, so a
 * module or package the binary lacks is missing here too (`--cached-only`: nothing downloads).
 */
export function prepareStandIn(
  embedded: Embedded,
  folder: string,
  configDir: string,
  entry: string = BUNDLE_ENTRY,
): StandIn {
  const root = `${folder}/app`;
  const denoDir = `${folder}/deno_dir`;
  extractEmbedded(embedded, root);
  const packagesDir = `${root}/.deno_compile_node_modules/localhost`;
  const packages = new Set<string>();
  try {
    Deno.mkdirSync(`${denoDir}/npm`, { recursive: true });
    Deno.renameSync(packagesDir, `${denoDir}/npm/registry.npmjs.org`);
    Deno.removeSync(`${root}/.deno_compile_node_modules`, { recursive: true });
    for (const e of embedded.entries) {
      const m = /^\.deno_compile_node_modules\/localhost\/((?:@[^/]+\/)?[^/]+)\/([^/]+)\//.exec(e.path);
      if (m) packages.add(`${m[1]}@${m[2]}`);
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const embeddedPackage = (spec: string): boolean => {
    // "npm:zod@4.6.7", "npm:/zod@4.6.7/" -> "zod@4.6.7"
    const m = /^npm:\/?((?:@[^/@]+\/)?[^/@]+@[^/_]+)/.exec(spec);
    return m !== null && packages.has(m[1]!);
  };
  const config = JSON.parse(Deno.readTextFileSync(`${configDir}/deno.json`));
  config.imports = Object.fromEntries(
    Object.entries(config.imports as Record<string, string>).filter(([, v]) => embeddedPackage(v)),
  );
  delete config.tasks;
  Deno.writeTextFileSync(`${root}/deno.json`, JSON.stringify(config, null, 2));
  const lock = JSON.parse(Deno.readTextFileSync(`${configDir}/deno.lock`));
  lock.npm = Object.fromEntries(
    Object.entries(lock.npm as Record<string, unknown>).filter(([id]) => packages.has(id.split("_")[0]!)),
  );
  lock.specifiers = Object.fromEntries(
    Object.entries(lock.specifiers as Record<string, string>).filter(([k, v]) =>
      packages.has(`${k.slice(4, k.lastIndexOf("@"))}@${v.split("_")[0]}`)
    ),
  );
  if (lock.workspace?.dependencies) {
    lock.workspace.dependencies = (lock.workspace.dependencies as string[]).filter(embeddedPackage);
  }
  Deno.writeTextFileSync(`${root}/deno.lock`, JSON.stringify(lock, null, 2));
  // The V8 flags the binary starts with (Deno's own and the compile's).
  const v8 = ((embedded.metadata["v8_flags"] ?? []) as string[]).filter((f) => f.startsWith("--"));
  return {
    root,
    denoDir,
    main: `${root}/${entry}`,
    // A binary loads a module when it is imported; `deno run` would read every literal import()
    // first without the lazy flag. Only the extracted files exist, so a module the binary lacks
    // fails here too, on first use as in the binary.
    runArgs: [
      "run",
      "-q",
      "--unstable-lazy-dynamic-imports",
      "-P",
      "--no-prompt",
      "--config",
      `${root}/deno.json`,
      "--node-modules-dir=none",
      "--cached-only",
      ...(v8.length ? [`--v8-flags=${v8.join(",")}`] : []),
    ],
  };
}
