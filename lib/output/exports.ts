// Results written to a file instead of the answer (`output: "file"` on any provider's data tool):
// uncut, below the data folder, owned by the caller, and readable over MCP as a resource, so a
// remote client can fetch what does not fit into the character limit.
import type { QuotaLedger } from "./quota.ts";
import type { SecretMasker } from "../secrets.ts";
import type { Clock } from "../clock.ts";
import type { ContentBlock, ResourceTemplateDefinition } from "../mcp/protocol.ts";
import { fileResourceTemplate, resourceLink } from "./resources.ts";
import { ProjectStorage } from "./storage.ts";
import { exportsRoot } from "./paths.ts";
import { openRowWriter } from "./row_writers.ts";
import type { FileFormat } from "./row_writers.ts";

/** Formats a result file can take: rows as CSV or JSON, or one text document (markdown). */
export type ExportFormat = FileFormat | "md";

/** What to write. Give `rows` (CSV/JSON) or `text` (markdown). */
export interface ExportRequest {
  /** File name without extension (checked; the server picks one when absent). */
  name?: string;
  format: ExportFormat;
  /** The records, all at once or page by page. */
  rows?: Iterable<Record<string, unknown>[]> | AsyncIterable<Record<string, unknown>[]>;
  /** CSV column order (other keys follow as met). */
  columns?: readonly string[];
  /** JSON: fields written before the rows (source, licence, query). */
  head?: Record<string, unknown>;
  /** JSON: the key of the rows array (default `items`). */
  itemsKey?: string;
  /** The document, for `md`. */
  text?: string;
  /** One line for listings and the resource link. */
  description: string;
}

/** A written file. */
export interface ExportedFile {
  uri: string;
  path: string;
  name: string;
  format: ExportFormat;
  /** Rows written (null for a text document). */
  rows: number | null;
  bytes: number;
  /** The `resource_link` block to add to the tool result. */
  link: ContentBlock;
}

/** Writes result files for one provider and one caller. */
export interface ResultFiles {
  save(request: ExportRequest): Promise<ExportedFile>;
}

/** Options for {@linkcode ResultExports}. */
export interface ResultExportsOptions {
  /** The data folder; files go to `<dataDir>/exports/<provider>/files/`. */
  dataDir: string;
  clock: Clock;
  /** Most MiB all exports may take (default 1024). */
  maxMb?: number;
  /** The server's per-client quota and `server.writes` (default: writes on, no quota). */
  quota?: QuotaLedger;
  /** The configured secrets, masked in every file written and read. */
  secrets?: SecretMasker;
}

/** URI prefix of exported files: `opendata://files/<provider>/files/<name>`. */
export const EXPORT_URI_PREFIX = "opendata://files/";

const SUBDIR = "files";

/**
 * The export store of the process: one storage below the data folder, a view per caller (over
 * HTTP each session or principal sees only its own files), a project folder per provider.
 */
export class ResultExports {
  #storage: ProjectStorage;
  #clock: Clock;

  constructor(options: ResultExportsOptions) {
    this.#clock = options.clock;
    this.#storage = new ProjectStorage({
      root: exportsRoot(options.dataDir),
      subdirs: [SUBDIR],
      clock: options.clock,
      uriPrefix: EXPORT_URI_PREFIX,
      settingName: "OPENDATA_MCP_DATA_DIR",
      maxBytes: Math.round((options.maxMb ?? 1024) * 1024 * 1024),
      // One project per provider: only the bytes need a limit.
      limitSettings: { projects: "the number of providers", bytes: "OPENDATA_MCP_EXPORT_MAX_MB" },
      // The folder per provider is the server's, not a project the caller made: the quota
      // counts the caller's bytes here, not its projects.
      callerProjects: false,
      ...(options.quota ? { quota: options.quota } : {}),
      ...(options.secrets ? { secrets: options.secrets } : {}),
    });
  }

  /**
   * The files of `provider` as `owner` writes them (`undefined`: stdio, one user), counted
   * against `client`'s share.
   */
  forCaller(provider: string, owner: string | undefined, client?: string): ResultFiles {
    const storage = this.#storage.forOwner(owner, client);
    return { save: (request) => this.#save(storage, provider, request) };
  }

  /** The resource template that lists and reads exported files. */
  resourceTemplate(): ResourceTemplateDefinition {
    return fileResourceTemplate(this.#storage, {
      name: "opendata-files",
      title: "Exported results",
      description:
        'Results tools wrote with output: "file" (whole, not cut to the answer\'s size limit): opendata://files/{provider}/{path}',
      maxBytes: 32 * 1024 * 1024,
      providerOf: (project) => project,
    });
  }

  async #save(storage: ProjectStorage, provider: string, request: ExportRequest): Promise<ExportedFile> {
    const stamp = new Date(this.#clock.now()).toISOString().replace(/[-:]/g, "").replace(/\..*$/, "");
    const name = request.name ?? `${provider}_${stamp}`;
    const reserved = await storage.reserve(provider, SUBDIR, name, request.format);
    try {
      let rows: number | null = null;
      let bytes: number;
      if (request.format === "md") {
        const data = new TextEncoder().encode(storage.secrets.mask(request.text ?? ""));
        reserved.charge(data.length);
        await Deno.writeFile(reserved.tempPath, data, { createNew: true });
        await Deno.rename(reserved.tempPath, reserved.path);
        bytes = data.length;
      } else {
        const writer = await openRowWriter({
          format: request.format,
          path: reserved.path,
          tempPath: reserved.tempPath,
          charge: reserved.charge,
          ...(reserved.secrets ? { secrets: reserved.secrets } : {}),
          ...(request.columns ? { columns: request.columns } : {}),
          ...(request.head ? { head: request.head } : {}),
          ...(request.itemsKey ? { itemsKey: request.itemsKey } : {}),
        });
        try {
          for await (const batch of request.rows ?? []) await writer.write(batch);
          const summary = await writer.close();
          rows = summary.rows_written;
          bytes = summary.bytes;
        } catch (e) {
          await writer.abort();
          throw e;
        }
      }
      await storage.recordFile(provider, reserved.relativePath, {
        rows: rows ?? 0,
        format: request.format,
        created: new Date(this.#clock.now()).toISOString(),
        description: request.description,
      });
      return {
        uri: reserved.uri,
        path: reserved.path,
        name: reserved.name,
        format: request.format,
        rows,
        bytes,
        link: resourceLink({
          uri: reserved.uri,
          name: reserved.name,
          format: request.format,
          bytes,
          description: request.description,
        }),
      };
    } catch (e) {
      await Deno.remove(reserved.tempPath).catch(() => {});
      throw e;
    } finally {
      storage.release(reserved);
    }
  }
}
