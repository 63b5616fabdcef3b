// Project-based file storage under one root folder (seed 003's FRED_STORAGE_DIR layout):
//
//   {root}/{project}/{subdir}/{file}   and   {root}/{project}/.project.json
//
// Every path is built from checked names and then confirmed, after symlinks are resolved, to lie
// inside the root. Files are never overwritten: a taken name gets a numeric suffix.
import * as nodePath from "node:path";
import type { Clock } from "../clock.ts";
import { ToolError } from "../errors.ts";
import { checkFilename, checkProjectName, checkRelativePath } from "./paths.ts";

/** Options for {@linkcode ProjectStorage}. */
export interface ProjectStorageOptions {
  /** The storage root; made absolute against the working directory when relative. */
  root: string;
  /** Folders every project gets (seed 003: series, maps, releases, categories, sources, tags). */
  subdirs: readonly string[];
  clock: Clock;
  /** Prefix of resource URIs for stored files, e.g. `fred://files/`. */
  uriPrefix: string;
  /** The setting users change to move the root, named in error hints (`FRED_STORAGE_DIR`). */
  settingName: string;
}

/** One file's entry in `.project.json`. */
export interface FileRecord {
  rows: number;
  format: string;
  created: string;
  /** Anything else the writer wants to remember (source URL without secrets, operation). */
  [key: string]: unknown;
}

/** The content of `.project.json`. */
export interface ProjectMeta {
  name: string;
  description: string | null;
  created: string;
  updated: string;
  files: Record<string, FileRecord>;
}

/** A project as `listProjects` reports it. */
export interface ProjectInfo {
  name: string;
  path: string;
  description: string | null;
  file_count: number;
  total_size_mb: number;
  created_date: string;
  last_modified: string;
}

/** A stored file as `listFiles` reports it. */
export interface FileInfo {
  name: string;
  /** Relative to the project folder, e.g. `series/GNPCA_observations_20251008_143022.csv`. */
  path: string;
  full_path: string;
  size_bytes: number;
  size_mb: number;
  rows: number | null;
  created: string;
  modified: string;
  format: string;
  resource_uri: string;
}

/** A file name claimed for writing. */
export interface ReservedFile {
  project: string;
  name: string;
  /** Relative to the project folder. */
  relativePath: string;
  /** Absolute final path. */
  path: string;
  /** Absolute path written first and renamed on success (hidden from listings). */
  tempPath: string;
  uri: string;
}

/** How `listFiles` orders files. */
export type FileSort = "name" | "size" | "modified" | "created";

/** Options for {@linkcode ProjectStorage.listFiles}. */
export interface ListFilesOptions {
  subdir?: string;
  sortBy?: FileSort;
  limit?: number;
}

const META = ".project.json";

/** Rounds bytes to MB with three decimals (seed 003 reports sizes in MB). */
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
  #reserved = new Set<string>();
  #chain: Promise<unknown> = Promise.resolve();

  constructor(options: ProjectStorageOptions) {
    this.#o = options;
    this.#root = nodePath.isAbsolute(options.root)
      ? nodePath.normalize(options.root)
      : nodePath.resolve(options.root);
  }

  /** The absolute storage root. */
  get root(): string {
    return this.#root;
  }

  /** The project folders created for every project. */
  get subdirs(): readonly string[] {
    return this.#o.subdirs;
  }

  /** The prefix of every stored file's resource URI, e.g. `fred://files/`. */
  get uriPrefix(): string {
    return this.#o.uriPrefix;
  }

  /** The resource URI of a stored file. */
  uri(project: string, relativePath: string): string {
    return `${this.#o.uriPrefix}${project}/${relativePath}`;
  }

  /** The absolute folder of a project (the name is checked; nothing is created). */
  projectPath(project: string, field = "project"): string {
    return nodePath.join(this.#root, checkProjectName(project, field));
  }

  /**
   * Creates the project with its folders and `.project.json` when missing. Returns whether it
   * was created now.
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
    const { path: projectDir } = await this.ensureProject(project);
    const dir = nodePath.join(projectDir, subdir);
    return await this.#serial(async () => {
      await this.#confine(await this.#ensureRoot(), dir);
      const ext = nodePath.extname(base);
      const stem = base.slice(0, base.length - ext.length);
      for (let n = 0;; n++) {
        const name = n === 0 ? base : `${stem}_${n}${ext}`;
        const path = nodePath.join(dir, name);
        if (this.#reserved.has(path) || (await exists(path))) continue;
        this.#reserved.add(path);
        const relativePath = `${subdir}/${name}`;
        return {
          project,
          name,
          relativePath,
          path,
          tempPath: nodePath.join(dir, `.${name}.partial`),
          uri: this.uri(project, relativePath),
        };
      }
    });
  }

  /** Gives a reserved name back (after the file was written, or abandoned). */
  release(file: ReservedFile): void {
    this.#reserved.delete(file.path);
  }

  /** Records a written file in the project's `.project.json`. */
  recordFile(project: string, relativePath: string, record: FileRecord): Promise<void> {
    const metaPath = nodePath.join(this.projectPath(project), META);
    return this.#serial(async () => {
      // An unreadable .project.json (cut short by a crash, or edited by hand) would otherwise
      // fail every later write in the project: start it afresh, recording this file.
      const meta = await readMeta(metaPath, project).catch(() => freshMeta(project));
      meta.files[relativePath] = record;
      meta.updated = new Date(this.#o.clock.now()).toISOString();
      // Written aside and renamed, so a crash mid-write never leaves it half written.
      const tempPath = `${metaPath}.partial`;
      await this.#fs("write", metaPath, async () => {
        await Deno.writeTextFile(tempPath, `${JSON.stringify(meta, null, 2)}\n`);
        await Deno.rename(tempPath, metaPath);
      });
    });
  }

  /** Every project under the root, by name. An absent root means no projects yet. */
  async listProjects(): Promise<ProjectInfo[]> {
    if (!(await exists(this.#root))) return [];
    const out: ProjectInfo[] = [];
    const entries = await this.#fs("read", this.#root, () => Array.fromAsync(Deno.readDir(this.#root)));
    for (const entry of entries) {
      if (!entry.isDirectory || !/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(entry.name)) continue;
      const dir = nodePath.join(this.#root, entry.name);
      const meta = await readMeta(nodePath.join(dir, META), entry.name).catch(() => undefined);
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
    if (!(await exists(dir))) {
      throw new ToolError("NOT_FOUND", `There is no project "${project}" in the storage folder`, {
        field,
        hint: "List projects with the project list tool, or create this one first",
      });
    }
    await this.#confine(await this.#realRoot(), dir);
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

  /** Every stored file across projects, newest first, at most `limit` (for `resources/list`). */
  async allFiles(limit: number): Promise<FileInfo[]> {
    const projects = await this.listProjects();
    const all: FileInfo[] = [];
    for (const p of projects) all.push(...(await this.#walk(p.name, p.path)));
    return all.sort((a, b) => Date.parse(b.modified) - Date.parse(a.modified)).slice(0, limit);
  }

  /**
   * Finds an existing stored file from a project name and relative path (both untrusted, e.g.
   * from a resource URI). Refuses anything hidden, linked or outside the root.
   */
  async resolveFile(
    project: string,
    relativePath: string,
  ): Promise<{ path: string; size: number; format: string }> {
    const segments = checkRelativePath(relativePath);
    const path = nodePath.join(this.projectPath(project), ...segments);
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
    return { path, size: info.size, format: nodePath.extname(path).slice(1) };
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
    await this.#fs("create", this.#root, () => Deno.mkdir(this.#root, { recursive: true }));
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
        `Refused a path that resolves outside the storage folder "${this.#root}"`,
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
          `This server process is not allowed to ${action} "${path}"`,
          {
            hint:
              `Run it with --allow-read and --allow-write for that folder, or unset ${this.#o.settingName} ` +
              "to use the per-user data folder that the default permissions allow",
          },
        );
      }
      if (e instanceof Deno.errors.PermissionDenied) {
        throw new ToolError("PERMISSION_ERROR", `No permission to ${action} "${path}"`, {
          hint: `Check the folder's permissions, or set ${this.#o.settingName} to a folder you can write`,
        });
      }
      throw new ToolError(
        "FILESYSTEM_ERROR",
        `Could not ${action} "${path}": ${e instanceof Error ? e.message : String(e)}`,
        { hint: `Check that ${this.#o.settingName} points at a usable folder with free space` },
      );
    }
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#chain.then(fn, fn);
    this.#chain = next.catch(() => {});
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

function freshMeta(project: string): ProjectMeta {
  const now = new Date().toISOString();
  return { name: project, description: null, created: now, updated: now, files: {} };
}

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
