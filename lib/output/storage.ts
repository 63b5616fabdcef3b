// Project-based file storage under one root folder (FRED_STORAGE_DIR's layout, docs/apis/fred.md):
//
//   {root}/{project}/{subdir}/{file}   and   {root}/{project}/.project.json
//
// Every path is built from checked names and then confirmed, after symlinks are resolved, to lie
// inside the root. Files are never overwritten: a taken name gets a numeric suffix.
//
// Ownership: over HTTP every project belongs to whoever made it (the call's `owner`). Each owner
// has a folder of its own, `{root}/_owners/{hash}/{project}/...` (`_` cannot start a project
// name, so it never collides with one), and `.project.json` records the owner's hash: one owner's
// projects are not found, listed or read by another, and two owners may each have a "default"
// project. Over stdio there is no owner and projects live directly under the root, as before.
//
// Limits: at most `maxProjects` projects (all owners together) and `maxBytes` stored. Stored bytes
// are counted as the disk uses them: every file and folder takes at least one 4 KiB block, so
// many tiny files cannot exhaust inodes under the byte limit. Files being written count as they
// grow; a write that would pass the limit fails with `STORAGE_LIMIT`. What one client may keep
// is the server's quota (quota.ts): the storage tells the ledger what each client holds here and
// asks it before a new project, a new file and every chunk written (`QUOTA_EXCEEDED`).
//
// Longer than the 500 lines the house keeps to, on purpose: ProjectStorage is one class whose
// reservations, byte and project counts and owner views share private state (one serial chain per
// root), and every method checks paths and limits against it. Its types are in storage_types.ts,
// the owner hash in owner_hash.ts, name checks in paths.ts.
import * as nodePath from "node:path";
import { ToolError } from "../errors.ts";
import { checkFilename, checkProjectName, checkRelativePath } from "./paths.ts";
import { CLIENTS_TO_FILL, quotaExceeded, QuotaLedger, shareOf, UNLIMITED } from "./quota.ts";
import { clientProjects, removeProjects, toEvict } from "./storage_scan.ts";
import { ownerHash } from "./owner_hash.ts";
import { NO_SECRETS } from "../secrets.ts";
import type { SecretMasker } from "../secrets.ts";
import type {
  FileInfo,
  FileRecord,
  ListFilesOptions,
  ProjectInfo,
  ProjectMeta,
  ProjectStorageOptions,
  ReservedFile,
} from "./storage_types.ts";

export { ownerHash } from "./owner_hash.ts";
export type {
  FileInfo,
  FileRecord,
  FileSort,
  ListFilesOptions,
  ProjectInfo,
  ProjectMeta,
  ProjectStorageOptions,
  ReservedFile,
} from "./storage_types.ts";

const META = ".project.json";
const OWNERS = "_owners";
const BLOCK = 4096;

/** Bytes as the disk counts them: whole 4 KiB blocks, at least one. */
function blocks(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / BLOCK)) * BLOCK;
}

/** Projects removed at most to make room for one new project or file (see `#makeRoom`). */
const MAX_EVICTIONS = 8;

/** How the share of a global cap is said in errors. */
const CLIENTS_NOTE = `1/${CLIENTS_TO_FILL}`;

/** Owner views kept for reuse; past this many they are dropped (a view is cheap to remake). */
const VIEWS_KEPT = 10_000;

/** Names of the folders in `path` that match `pattern` (none when it cannot be read). */
async function subdirs(path: string, pattern: RegExp): Promise<string[]> {
  try {
    const entries = await Array.fromAsync(Deno.readDir(path));
    return entries.filter((e) => e.isDirectory && pattern.test(e.name)).map((e) => e.name);
  } catch {
    return [];
  }
}

/** State every owner's view of one storage shares. */
interface Shared {
  reserved: Set<string>;
  chain: Promise<unknown>;
  /** Bytes written so far by each file being written, by its temporary path. */
  inflight: Map<string, number>;
  /** Bytes of finished files, as of the last count plus files finished since. */
  committed: number;
  /** The same by client hash ("" for files of no client). */
  committedBy: Map<string, number>;
  /** The client hash of each file being written, by its temporary path. */
  inflightClient: Map<string, string>;
  views: Map<string, ProjectStorage>;
  rootView: ProjectStorage;
  quota: QuotaLedger;
}

/** Rounds bytes to MB with three decimals (the project tools report sizes in MB). */
export function toMb(bytes: number): number {
  return Math.round((bytes / 1_048_576) * 1000) / 1000;
}

/** Whether `child` lies strictly inside `parent` (both absolute, symlinks already resolved). */
export function isInside(parent: string, child: string): boolean {
  const rel = nodePath.relative(parent, child);
  return rel !== "" && !rel.startsWith("..") && !nodePath.isAbsolute(rel);
}

/** Files under one root, organised by project; see the module comment. */
export class ProjectStorage {
  #o: ProjectStorageOptions;
  #root: string;
  #s: Shared;
  /** The owner's hash, or undefined for the root's own projects (stdio). */
  #owner: string | undefined;
  /** The hash of the client this view's new projects and files count against, if any. */
  #client: string | undefined;
  /** Where this owner's projects live. */
  #base: string;
  #quota: QuotaLedger;

  /** A storage; `view` is internal (see {@linkcode ProjectStorage.forOwner}). */
  constructor(options: ProjectStorageOptions, view?: { shared: Shared; owner: string; client?: string }) {
    this.#o = options;
    this.#root = nodePath.isAbsolute(options.root)
      ? nodePath.normalize(options.root)
      : nodePath.resolve(options.root);
    this.#s = view?.shared ?? {
      reserved: new Set(),
      chain: Promise.resolve(),
      inflight: new Map(),
      committed: 0,
      committedBy: new Map(),
      inflightClient: new Map(),
      views: new Map(),
      rootView: this,
      quota: options.quota ?? new QuotaLedger({ writes: "on", limits: UNLIMITED }),
    };
    this.#owner = view?.owner;
    this.#client = view?.client;
    this.#base = this.#owner === undefined ? this.#root : nodePath.join(this.#root, OWNERS, this.#owner);
    this.#quota = this.#s.quota;
    if (view === undefined) {
      this.#quota.addStorage({
        bytesOf: (client) => (this.#s.committedBy.get(client) ?? 0) + this.#inflightBytes(client),
        recount: () => this.#recount(),
        ...(options.callerProjects === false
          ? {}
          : { projectsOf: (client: string) => this.#countClientProjects(client) }),
      }, this.#root);
    }
  }

  /**
   * The projects of one owner (a tool call's `owner`); `undefined` (stdio) is the root's own.
   * Views share reservations, the write queue and the storage limits.
   */
  forOwner(owner: string | undefined, client?: string): ProjectStorage {
    return this.forOwnerHash(
      owner === undefined ? undefined : ownerHash(owner),
      client === undefined ? undefined : ownerHash(`client:${client}`),
    );
  }

  /**
   * The projects of the owner whose {@linkcode ownerHash} is `hash` (a job resumed on another
   * replica knows only the hash); undefined is the root's own.
   */
  forOwnerHash(hash: string | undefined, clientHash?: string): ProjectStorage {
    if (hash === undefined) return this.#s.rootView;
    if (!/^[0-9a-f]{32}$/.test(hash)) throw new Error(`Not an owner hash: "${hash}"`);
    if (clientHash !== undefined && !/^[0-9a-f]{32}$/.test(clientHash)) {
      throw new Error(`Not a client hash: "${clientHash}"`);
    }
    const key = clientHash === undefined ? hash : `${hash}/${clientHash}`;
    let view = this.#s.views.get(key);
    if (!view) {
      if (this.#s.views.size >= VIEWS_KEPT) this.#s.views.clear();
      view = new ProjectStorage(this.#o, {
        shared: this.#s,
        owner: hash,
        ...(clientHash === undefined ? {} : { client: clientHash }),
      });
      this.#s.views.set(key, view);
    }
    return view;
  }

  /** The hash of the client this view counts against (see {@linkcode forOwner}), if any. */
  get clientHash(): string | undefined {
    return this.#client;
  }

  /** The absolute storage root. */
  get root(): string {
    return this.#root;
  }

  /**
   * Whether this view's caller may see absolute paths: over stdio (no owner) the user runs the
   * server; over HTTP (an owner) paths are shown relative to the storage folder, never whole.
   */
  get localPaths(): boolean {
    return this.#owner === undefined;
  }

  /** `path` as this view's caller may see it (see {@linkcode localPaths}). */
  #shown(path: string): string {
    if (this.localPaths) return `"${path}"`;
    const rel = nodePath.relative(this.#root, path);
    if (rel === "") return "the storage folder";
    return rel.startsWith("..") || nodePath.isAbsolute(rel)
      ? "a path outside the storage folder"
      : `"${rel}" in the storage folder`;
  }

  /** `text` (e.g. a system error naming a path) without the storage root over HTTP. */
  #scrubbed(text: string): string {
    return this.localPaths ? text : text.replaceAll(this.#root, "<storage folder>");
  }

  /** The folder holding this view's projects (the root over stdio). */
  get base(): string {
    return this.#base;
  }

  /** The project folders created for every project. */
  get subdirs(): readonly string[] {
    return this.#o.subdirs;
  }

  /** The prefix of every stored file's resource URI, e.g. `fred://files/`. */
  get uriPrefix(): string {
    return this.#o.uriPrefix;
  }

  /** The secrets masked in this storage's files (none when none are configured). */
  get secrets(): SecretMasker {
    return this.#o.secrets ?? NO_SECRETS;
  }

  /** The resource URI of a stored file. */
  uri(project: string, relativePath: string): string {
    return `${this.#o.uriPrefix}${project}/${relativePath}`;
  }

  /** The absolute folder of a project (the name is checked; nothing is created). */
  projectPath(project: string, field = "project"): string {
    return nodePath.join(this.#base, checkProjectName(project, field));
  }

  /**
   * Creates the project with its folders and `.project.json` when missing. Returns whether it
   * was created now. A new project past `maxProjects` is refused with `STORAGE_LIMIT`.
   */
  ensureProject(
    project: string,
    description?: string | null,
    field = "project",
  ): Promise<{ path: string; created: boolean; subdirs: string[] }> {
    const dir = this.projectPath(project, field);
    return this.#serial(async () => {
      const realRoot = await this.#ensureRoot();
      const existed = await exists(dir);
      if (existed) {
        await this.#confine(realRoot, dir);
        await this.#checkOwner(dir, project, field);
      } else {
        if (this.#o.callerProjects === false) this.#quota.checkWrites("create projects");
        else await this.#quota.checkProject(this.#client);
        await this.#makeRoom("projects");
        await this.#checkProjectLimit();
      }
      await this.#fs("create", dir, () => Deno.mkdir(dir, { recursive: true }));
      await this.#confine(realRoot, dir);
      for (const sub of this.#o.subdirs) {
        const subPath = nodePath.join(dir, sub);
        await this.#fs("create", subPath, () => Deno.mkdir(subPath, { recursive: true }));
      }
      const metaPath = nodePath.join(dir, META);
      if (!(await exists(metaPath))) {
        const now = new Date(this.#o.clock.now()).toISOString();
        const meta: ProjectMeta = {
          name: project,
          ...(this.#owner === undefined ? {} : { owner: this.#owner }),
          ...(this.#client === undefined ? {} : { client: this.#client }),
          description: description ?? null,
          created: now,
          updated: now,
          files: {},
        };
        await this.#fs(
          "write",
          metaPath,
          () => Deno.writeTextFile(metaPath, `${JSON.stringify(meta, null, 2)}\n`),
        );
      }
      return { path: dir, created: !existed, subdirs: [...this.#o.subdirs] };
    });
  }

  /**
   * Claims a new file in `project/subdir`. `filename` is the caller's name (checked, extension
   * added) or the server's own; a taken name gets `_1`, `_2`, ... so nothing is overwritten.
   * Refused with `STORAGE_LIMIT` when the storage is full already, `QUOTA_EXCEEDED` when the
   * caller's quota is.
   */
  async reserve(
    project: string,
    subdir: string,
    filename: string,
    format: string,
    field = "filename",
  ): Promise<ReservedFile> {
    if (!this.#o.subdirs.includes(subdir)) throw new Error(`Unknown project folder "${subdir}"`);
    const base = checkFilename(filename, format, field);
    this.#quota.checkWrites("write files");
    const { path: projectDir } = await this.ensureProject(project);
    const dir = nodePath.join(projectDir, subdir);
    return await this.#serial(async () => {
      await this.#confine(await this.#ensureRoot(), dir);
      // Counted afresh for every file: the user may have deleted files meanwhile. The quota
      // counts the client's files in every storage of the server, so they are all recounted.
      if (this.#quotaApplies()) await this.#quota.recount();
      else if (this.#o.maxBytes !== undefined) await this.#recount();
      await this.#makeRoom("bytes");
      this.#checkBytes(0);
      const ext = nodePath.extname(base);
      const stem = base.slice(0, base.length - ext.length);
      for (let n = 0;; n++) {
        const name = n === 0 ? base : `${stem}_${n}${ext}`;
        const path = nodePath.join(dir, name);
        const tempPath = nodePath.join(dir, `.${name}.partial`);
        // A partial file is another process's (a replica sharing the folder) file in the making.
        if (this.#s.reserved.has(path) || (await exists(path)) || (await exists(tempPath))) continue;
        return this.#claimName(project, subdir, dir, name);
      }
    });
  }

  /**
   * Claims again the file `relativePath` (`subdir/name`) of `project` whose temporary file
   * another process left unfinished (a replica that died mid-job), so the job carries on
   * writing it. Refused when the name is not in the making (no temporary file, a final file
   * already, or reserved here), so nothing finished or another writer's is ever reopened.
   */
  async reclaim(project: string, relativePath: string, format: string): Promise<ReservedFile> {
    const [subdir, filename] = checkRelativePath(relativePath, 2, "file");
    if (subdir === undefined || filename === undefined || !this.#o.subdirs.includes(subdir)) {
      throw new Error(`Not a project file: "${relativePath}"`);
    }
    const name = checkFilename(filename, format, "file");
    if (name !== filename) throw new Error(`Not a ${format} file: "${relativePath}"`);
    this.#quota.checkWrites("write files");
    const dir = nodePath.join(this.projectPath(checkProjectName(project, "project")), subdir);
    return await this.#serial(async () => {
      await this.#confine(await this.#ensureRoot(), dir);
      const path = nodePath.join(dir, name);
      const partial = await Deno.lstat(nodePath.join(dir, `.${name}.partial`)).catch(() => undefined);
      if (this.#s.reserved.has(path) || (await exists(path)) || !partial?.isFile) {
        throw new Error(`No unfinished file to carry on: "${relativePath}"`);
      }
      return this.#claimName(project, subdir, dir, name);
    });
  }

  #claimName(project: string, subdir: string, dir: string, name: string): ReservedFile {
    const path = nodePath.join(dir, name);
    const tempPath = nodePath.join(dir, `.${name}.partial`);
    this.#s.reserved.add(path);
    const relativePath = `${subdir}/${name}`;
    this.#s.inflight.set(tempPath, 0);
    if (this.#client !== undefined) this.#s.inflightClient.set(tempPath, this.#client);
    return {
      project,
      name,
      relativePath,
      path,
      tempPath,
      uri: this.uri(project, relativePath),
      charge: (bytes: number) => this.#charge(tempPath, bytes),
      ...(this.#o.secrets ? { secrets: this.#o.secrets } : {}),
    };
  }

  /** Gives a reserved name back (after the file was written, or abandoned). */
  release(file: ReservedFile): void {
    const written = this.#s.inflight.get(file.tempPath);
    const client = this.#s.inflightClient.get(file.tempPath);
    this.#s.inflight.delete(file.tempPath);
    this.#s.inflightClient.delete(file.tempPath);
    this.#s.reserved.delete(file.path);
    try {
      // A kept file now counts as stored until the next count sees it on disk.
      if (written !== undefined && Deno.lstatSync(file.path).isFile) {
        this.#s.committed += blocks(written);
        if (client !== undefined) {
          this.#s.committedBy.set(client, (this.#s.committedBy.get(client) ?? 0) + blocks(written));
        }
      }
    } catch {
      // Abandoned: nothing was kept.
    }
  }

  /** A file's entry in its project's `.project.json` (what wrote it, from what request), if this owner's. */
  async fileRecord(project: string, relativePath: string): Promise<FileRecord | undefined> {
    const meta = await readMeta(nodePath.join(this.projectPath(project), META), project).catch(() =>
      undefined
    );
    if (!meta || meta.owner !== this.#owner) return undefined;
    return Object.hasOwn(meta.files, relativePath) ? meta.files[relativePath] : undefined;
  }

  /** Records a written file in the project's `.project.json`. */
  recordFile(project: string, relativePath: string, record: FileRecord): Promise<void> {
    const metaPath = nodePath.join(this.projectPath(project), META);
    return this.#serial(async () => {
      // An unreadable .project.json (cut short by a crash, or edited by hand) would otherwise
      // fail every later write in the project: start it afresh, recording this file.
      const meta = await readMeta(metaPath, project).catch(() =>
        freshMeta(project, this.#owner, this.#client)
      );
      meta.files[relativePath] = this.secrets.maskDeep(record);
      meta.updated = new Date(this.#o.clock.now()).toISOString();
      // Written aside and renamed, so a crash mid-write never leaves it half written.
      const tempPath = `${metaPath}.partial`;
      await this.#fs("write", metaPath, async () => {
        await Deno.writeTextFile(tempPath, `${JSON.stringify(meta, null, 2)}\n`);
        await Deno.rename(tempPath, metaPath);
      });
    });
  }

  /** This owner's projects, by name. An absent root means no projects yet. */
  async listProjects(): Promise<ProjectInfo[]> {
    if (!(await exists(this.#base))) return [];
    const out: ProjectInfo[] = [];
    const entries = await this.#fs("read", this.#base, () => Array.fromAsync(Deno.readDir(this.#base)));
    for (const entry of entries) {
      if (!entry.isDirectory || !PROJECT_DIR.test(entry.name)) continue;
      const dir = nodePath.join(this.#base, entry.name);
      const meta = await readMeta(nodePath.join(dir, META), entry.name).catch(() => undefined);
      if (meta && meta.owner !== this.#owner) continue;
      const files = await this.#walk(entry.name, dir);
      const dirStat = await Deno.stat(dir);
      const modified = Math.max(dirStat.mtime?.getTime() ?? 0, ...files.map((f) => Date.parse(f.modified)));
      out.push({
        name: entry.name,
        path: dir,
        description: meta?.description ?? null,
        file_count: files.length,
        total_size_mb: toMb(files.reduce((s, f) => s + f.size_bytes, 0)),
        created_date: (meta?.created ?? isoOf(dirStat.birthtime ?? dirStat.mtime)).slice(0, 10),
        last_modified: new Date(modified || 0).toISOString().slice(0, 10),
      });
    }
    return out.sort((a, b) => byCode(a.name, b.name));
  }

  /** Files of one project, sorted and limited; totals cover every file. */
  async listFiles(
    project: string,
    options: ListFilesOptions = {},
    field = "project_name",
  ): Promise<{ path: string; files: FileInfo[]; total_files: number; total_size_mb: number }> {
    const dir = this.projectPath(project, field);
    if (!(await exists(dir))) throw noProject(project, field);
    await this.#confine(await this.#realRoot(), dir);
    await this.#checkOwner(dir, project, field);
    let files = await this.#walk(project, dir);
    if (options.subdir) files = files.filter((f) => f.path.startsWith(`${options.subdir}/`));
    const total = files.reduce((s, f) => s + f.size_bytes, 0);
    const sortBy = options.sortBy ?? "modified";
    const key = (f: FileInfo): number | string =>
      sortBy === "name"
        ? f.path
        : sortBy === "size"
        ? f.size_bytes
        : Date.parse(sortBy === "created" ? f.created : f.modified);
    files.sort((a, b) => {
      const ka = key(a);
      const kb = key(b);
      if (typeof ka === "string" && typeof kb === "string") return byCode(ka, kb);
      return (kb as number) - (ka as number);
    });
    return {
      path: dir,
      files: files.slice(0, options.limit ?? 100),
      total_files: files.length,
      total_size_mb: toMb(total),
    };
  }

  /** This owner's stored files across projects, newest first, at most `limit` (for `resources/list`). */
  async allFiles(limit: number): Promise<FileInfo[]> {
    const projects = await this.listProjects();
    const all: FileInfo[] = [];
    for (const p of projects) all.push(...(await this.#walk(p.name, p.path)));
    return all.sort((a, b) => Date.parse(b.modified) - Date.parse(a.modified)).slice(0, limit);
  }

  /**
   * Finds an existing stored file from a project name and relative path (both untrusted, e.g.
   * from a resource URI). Refuses anything hidden, linked or outside the root; another owner's
   * project is not found.
   */
  async resolveFile(
    project: string,
    relativePath: string,
  ): Promise<{ path: string; size: number; format: string }> {
    const segments = checkRelativePath(relativePath);
    const dir = this.projectPath(project);
    const path = nodePath.join(dir, ...segments);
    let info: Deno.FileInfo;
    try {
      info = await Deno.lstat(path);
    } catch {
      throw new ToolError("NOT_FOUND", `There is no file "${relativePath}" in project "${project}"`, {
        hint: "List the project's files to see what is stored",
      });
    }
    if (!info.isFile) {
      throw new ToolError(
        "PATH_SECURITY_ERROR",
        `"${relativePath}" in project "${project}" is not a regular file`,
      );
    }
    await this.#confine(await this.#realRoot(), path);
    await this.#checkOwner(dir, project, "project");
    return { path, size: info.size, format: nodePath.extname(path).slice(1) };
  }

  /** Bytes stored under the root (all owners), in 4 KiB blocks, files being written included. */
  async storedBytes(): Promise<number> {
    return await this.#serial(async () => {
      await this.#recount();
      return this.#s.committed + this.#inflightBytes();
    });
  }

  /** Refuses (as not found) a project whose `.project.json` names another owner. */
  async #checkOwner(dir: string, project: string, field: string): Promise<void> {
    const meta = await readMeta(nodePath.join(dir, META), project).catch(() => undefined);
    if (meta && meta.owner !== this.#owner) throw noProject(project, field);
  }

  /** Bytes of files being written, of one client's or (`client` undefined) of everyone's. */
  #inflightBytes(client?: string): number {
    let sum = 0;
    for (const [path, bytes] of this.#s.inflight) {
      if (client === undefined || this.#s.inflightClient.get(path) === client) sum += blocks(bytes);
    }
    return sum;
  }

  /** Whether this view's writes count against a client's byte quota (over HTTP, with one set). */
  #quotaApplies(): boolean {
    return this.#client !== undefined && this.#quota.limits.bytes !== Infinity;
  }

  async #recount(): Promise<void> {
    const counted = await this.#countStored();
    this.#s.committed = counted.total;
    this.#s.committedBy = counted.byClient;
  }

  #charge(tempPath: string, bytes: number): void {
    const before = this.#s.inflight.get(tempPath) ?? 0;
    this.#checkBytes(blocks(before + bytes) - blocks(before));
    this.#s.inflight.set(tempPath, before + bytes);
  }

  /** Refuses `more` bytes past the caller's quota, its share of the storage or the storage's own limit. */
  #checkBytes(more: number): void {
    this.#quota.checkBytes(this.#client, more);
    const max = this.#o.maxBytes;
    if (max === undefined) return;
    const client = this.#client;
    if (client !== undefined) {
      const mine = (this.#s.committedBy.get(client) ?? 0) + this.#inflightBytes(client);
      const share = shareOf(max, BLOCK);
      if (mine + more > share || (more === 0 && mine >= share)) {
        throw this.#shareFull(`${toMb(mine)} MB of files`, `${toMb(max)} MB`, "bytes");
      }
    }
    const used = this.#s.committed + this.#inflightBytes();
    if (used + more <= max && (more > 0 || used < max)) return;
    const setting = this.#o.limitSettings?.bytes ?? "the storage limit";
    throw new ToolError(
      "STORAGE_LIMIT",
      `The storage folder is full: ${toMb(used)} MB stored of the ${toMb(max)} MB allowed`,
      {
        hint: `Delete files or projects you no longer need from ${
          this.#shown(this.#root)
        } on the server, or raise ${setting}`,
      },
    );
  }

  /** The error of a client at its share of a global cap (quota.ts `shareOf`): `held` of `max`. */
  #shareFull(held: string, max: string, kind: "projects" | "bytes"): Error {
    const setting = this.#o.limitSettings?.[kind] ?? "the storage limit";
    return quotaExceeded(
      `your client keeps ${held} in this storage, its share (at most ${CLIENTS_NOTE} of the ${max} it holds for all clients)`,
      kind === "projects"
        ? "Save into one of your existing projects (list them with the project list tool)"
        : "List your projects and files and ask the operator to remove those you no longer need",
      setting,
    );
  }

  /**
   * Before a new project (or file, `bytes`): refuses a client at its share of this storage's
   * projects; and when the storage is full, makes room by removing the least recently touched
   * projects of the client holding the most, unless the asker is that client (the full
   * storage's own error then stands). A flood from a few addresses so never shuts out a small
   * client.
   */
  async #makeRoom(kind: "projects" | "bytes"): Promise<void> {
    const max = kind === "projects" ? this.#o.maxProjects : this.#o.maxBytes;
    const client = this.#client;
    if (max === undefined || client === undefined) return;
    if (kind === "projects") {
      const mine = await this.#countClientProjects(client);
      if (mine >= shareOf(max)) throw this.#shareFull(`${mine} projects`, `${max} projects`, kind);
    }
    for (let round = 0; round < MAX_EVICTIONS; round++) {
      const full = kind === "projects"
        ? (await this.#countProjects()) >= max
        : this.#s.committed + this.#inflightBytes() >= max;
      if (!full) return;
      const busy = (path: string) => [...this.#s.inflight.keys()].some((p) => isInside(path, p));
      const victim = toEvict(await clientProjects(this.#root), client, kind, busy);
      if (!victim || (await removeProjects([victim])) === 0) return;
      this.#o.logger?.warn(
        "project removed to make room: the storage was full and its client holds the most",
        {
          project: nodePath.basename(victim.path),
          client: victim.client.slice(0, 8),
          full: kind,
        },
      );
      await this.#recount();
    }
  }

  async #checkProjectLimit(): Promise<void> {
    const max = this.#o.maxProjects;
    if (max === undefined) return;
    const count = await this.#countProjects();
    if (count < max) return;
    const setting = this.#o.limitSettings?.projects ?? "the project limit";
    throw new ToolError(
      "STORAGE_LIMIT",
      `The storage folder holds ${count} projects, the most allowed (${max}); no new project was created`,
      {
        hint:
          `Use an existing project (list them with the project list tool), delete unused project folders from ${
            this.#shown(this.#root)
          } on the server, or raise ${setting}`,
      },
    );
  }

  /** Projects of every owner. */
  async #countProjects(): Promise<number> {
    const dirs = async (path: string, pattern: RegExp): Promise<string[]> => {
      try {
        const entries = await Array.fromAsync(Deno.readDir(path));
        return entries.filter((e) => e.isDirectory && pattern.test(e.name)).map((e) => e.name);
      } catch {
        return [];
      }
    };
    let count = (await dirs(this.#root, PROJECT_DIR)).length;
    const owners = nodePath.join(this.#root, OWNERS);
    for (const owner of await dirs(owners, /^[0-9a-f]{32}$/)) {
      count += (await dirs(nodePath.join(owners, owner), PROJECT_DIR)).length;
    }
    return count;
  }

  /** Projects (of every owner) whose `.project.json` names client hash `client`. */
  async #countClientProjects(client: string): Promise<number> {
    const owners = nodePath.join(this.#root, OWNERS);
    let count = 0;
    for (const owner of await subdirs(owners, /^[0-9a-f]{32}$/)) {
      const base = nodePath.join(owners, owner);
      for (const project of await subdirs(base, PROJECT_DIR)) {
        const meta = await readMeta(nodePath.join(base, project, META), project).catch(() => undefined);
        if (meta?.client === client) count++;
      }
    }
    return count;
  }

  /**
   * Everything on disk under the root, in 4 KiB blocks, except files being written now; and the
   * same by the client hash each owner's project names.
   */
  async #countStored(): Promise<{ total: number; byClient: Map<string, number> }> {
    let total = 0;
    const byClient = new Map<string, number>();
    const owners = nodePath.join(this.#root, OWNERS);
    // What each owner's project folder holds is counted against the client its meta names.
    const projectClient = new Map<string, string>();
    for (const owner of await subdirs(owners, /^[0-9a-f]{32}$/)) {
      const base = nodePath.join(owners, owner);
      for (const project of await subdirs(base, PROJECT_DIR)) {
        const meta = await readMeta(nodePath.join(base, project, META), project).catch(() => undefined);
        if (meta?.client !== undefined) projectClient.set(nodePath.join(base, project), meta.client);
      }
    }
    let current = "";
    const visit = async (dir: string, depth: number): Promise<void> => {
      let entries: Deno.DirEntry[];
      try {
        entries = await Array.fromAsync(Deno.readDir(dir));
      } catch {
        return;
      }
      for (const entry of entries) {
        if (entry.isSymlink) continue;
        const path = nodePath.join(dir, entry.name);
        if (entry.isDirectory) {
          const outer = current;
          current = projectClient.get(path) ?? current;
          total += BLOCK;
          if (current !== "") byClient.set(current, (byClient.get(current) ?? 0) + BLOCK);
          if (depth < 6) await visit(path, depth + 1);
          current = outer;
        } else if (entry.isFile && !this.#s.inflight.has(path)) {
          try {
            const size = blocks((await Deno.lstat(path)).size);
            total += size;
            if (current !== "") byClient.set(current, (byClient.get(current) ?? 0) + size);
          } catch {
            // Removed meanwhile.
          }
        }
      }
    };
    await visit(this.#root, 0);
    return { total, byClient };
  }

  async #walk(project: string, dir: string): Promise<FileInfo[]> {
    const meta = await readMeta(nodePath.join(dir, META), project).catch(() => undefined);
    const out: FileInfo[] = [];
    const visit = async (folder: string, rel: string, depth: number): Promise<void> => {
      let entries: Deno.DirEntry[];
      try {
        entries = await Array.fromAsync(Deno.readDir(folder));
      } catch {
        return;
      }
      for (const entry of entries) {
        if (entry.name.startsWith(".") || entry.isSymlink) continue;
        const full = nodePath.join(folder, entry.name);
        const relPath = rel ? `${rel}/${entry.name}` : entry.name;
        if (entry.isDirectory && depth < 1) {
          await visit(full, relPath, depth + 1);
        } else if (entry.isFile) {
          const stat = await Deno.stat(full);
          const record = meta?.files[relPath];
          out.push({
            name: entry.name,
            path: relPath,
            full_path: full,
            size_bytes: stat.size,
            size_mb: toMb(stat.size),
            rows: typeof record?.rows === "number" ? record.rows : null,
            created: record?.created ?? isoOf(stat.birthtime ?? stat.mtime),
            modified: isoOf(stat.mtime),
            format: nodePath.extname(entry.name).slice(1) || "unknown",
            resource_uri: this.uri(project, relPath),
          });
        }
      }
    };
    await visit(dir, "", 0);
    return out;
  }

  async #ensureRoot(): Promise<string> {
    await this.#fs("create", this.#base, () => Deno.mkdir(this.#base, { recursive: true }));
    return await this.#realRoot();
  }

  async #realRoot(): Promise<string> {
    return await this.#fs("read", this.#root, () => Deno.realPath(this.#root));
  }

  /** Refuses `path` unless, with symlinks resolved, it lies inside the root. */
  async #confine(realRoot: string, path: string): Promise<void> {
    const real = await Deno.realPath(path).catch(() => undefined);
    if (real === undefined || !isInside(realRoot, real)) {
      throw new ToolError(
        "PATH_SECURITY_ERROR",
        `Refused a path that resolves outside the storage folder${this.localPaths ? ` "${this.#root}"` : ""}`,
        { hint: "Remove symbolic links from the storage folder, or choose another project name" },
      );
    }
  }

  async #fs<T>(action: "create" | "write" | "read", path: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof ToolError) throw e;
      if (e instanceof Deno.errors.NotCapable) {
        throw new ToolError(
          "PERMISSION_ERROR",
          `This server process is not allowed to ${action} ${this.#shown(path)}`,
          {
            hint:
              `Run it with --allow-read and --allow-write for that folder, or unset ${this.#o.settingName} ` +
              "to use the per-user data folder that the default permissions allow",
          },
        );
      }
      if (e instanceof Deno.errors.PermissionDenied) {
        throw new ToolError("PERMISSION_ERROR", `No permission to ${action} ${this.#shown(path)}`, {
          hint: `Check the folder's permissions, or set ${this.#o.settingName} to a folder you can write`,
        });
      }
      throw new ToolError(
        "FILESYSTEM_ERROR",
        `Could not ${action} ${this.#shown(path)}: ${
          this.#scrubbed(e instanceof Error ? e.message : String(e))
        }`,
        { hint: `Check that ${this.#o.settingName} points at a usable folder with free space` },
      );
    }
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#s.chain.then(fn, fn);
    this.#s.chain = next.catch(() => {});
    return next;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

function freshMeta(project: string, owner?: string, client?: string): ProjectMeta {
  const now = new Date().toISOString();
  return {
    name: project,
    ...(owner === undefined ? {} : { owner }),
    ...(client === undefined ? {} : { client }),
    description: null,
    created: now,
    updated: now,
    files: {},
  };
}

function noProject(project: string, field: string): ToolError {
  return new ToolError("NOT_FOUND", `There is no project "${project}" in the storage folder`, {
    field,
    hint: "List projects with the project list tool, or create this one first",
  });
}

const PROJECT_DIR = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

async function readMeta(path: string, project: string): Promise<ProjectMeta> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return freshMeta(project);
    throw e;
  }
  const parsed = JSON.parse(text) as Partial<ProjectMeta>;
  return {
    name: parsed.name ?? project,
    ...(typeof parsed.owner === "string" ? { owner: parsed.owner } : {}),
    ...(typeof parsed.client === "string" && /^[0-9a-f]{32}$/.test(parsed.client)
      ? { client: parsed.client }
      : {}),
    description: parsed.description ?? null,
    created: parsed.created ?? new Date().toISOString(),
    updated: parsed.updated ?? parsed.created ?? new Date().toISOString(),
    files: parsed.files && typeof parsed.files === "object" ? parsed.files : {},
  };
}

// Plain code-unit order: predictable for file names, unlike locale collation.
function byCode(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function isoOf(date: Date | null): string {
  return (date ?? new Date(0)).toISOString();
}
