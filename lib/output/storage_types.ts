// The shapes of project storage (storage.ts): its options, file and project records, listings
// and reserved files.
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { QuotaLedger } from "./quota.ts";
import type { SecretMasker } from "../secrets.ts";

/** Options for {@linkcode ProjectStorage}. */
export interface ProjectStorageOptions {
  /** The storage root; made absolute against the working directory when relative. */
  root: string;
  /** Folders every project gets (FRED's: series, maps, releases, categories, sources, tags). */
  subdirs: readonly string[];
  clock: Clock;
  /** Prefix of resource URIs for stored files, e.g. `fred://files/`. */
  uriPrefix: string;
  /** The setting users change to move the root, named in error hints (`FRED_STORAGE_DIR`). */
  settingName: string;
  /** Most projects, all owners together (default: no limit). */
  maxProjects?: number;
  /** Most bytes stored under the root, counted in 4 KiB blocks (default: no limit). */
  maxBytes?: number;
  /** The settings that raise the limits, named in error hints. */
  limitSettings?: { projects: string; bytes: string };
  /**
   * The server's per-client quota and `server.writes` (one ledger for every storage and job
   * manager of the server). Default: writes on, no quota.
   */
  quota?: QuotaLedger;
  /**
   * Whether the project folders are the callers' own projects, counted against the quota's
   * projects (default true); false for folders the server makes (one per provider for exports).
   */
  callerProjects?: boolean;
  /** The configured secrets: masked in every row written to and every file read from this storage. */
  secrets?: SecretMasker;
  /** Where a project removed to make room at a full cap is logged. */
  logger?: Logger;
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
  /** Hash of the owner that made the project (absent over stdio). */
  owner?: string;
  /** Hash of the client the project counts against (absent over stdio). */
  client?: string;
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
  /**
   * Counts `bytes` more written to this file against the storage limit; throws `STORAGE_LIMIT`
   * (and counts nothing) when they would pass it. Writers call it before each write.
   */
  charge(bytes: number): void;
  /** The secrets to mask in what is written to it (hand it to the row writer). */
  secrets?: SecretMasker;
}

/** How `listFiles` orders files. */
export type FileSort = "name" | "size" | "modified" | "created";

/** Options for {@linkcode ProjectStorage.listFiles}. */
export interface ListFilesOptions {
  subdir?: string;
  sortBy?: FileSort;
  limit?: number;
}
