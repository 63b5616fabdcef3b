// The result exports as the server starts with them: what a server instance needs to list the
// exports' resource template and hand each call its `ResultFiles`, without loading the code that
// writes and reads files (exports.ts, storage.ts, the row writers: about a seventh of the code a
// start would load). That code loads when a file is first written, listed or read, or when the
// quota counts a client's files.
import type { McpExtra, ResourceTemplateDefinition } from "../mcp/protocol.ts";
import type { ExportRequest, ResultExports, ResultExportsOptions, ResultFiles } from "./exports.ts";

/**
 * The fixed fields of the exports' resource template, as `ResultExports.resourceTemplate()`
 * gives them (tests/output/deferred_exports_test.ts checks they are the same).
 */
export const EXPORTS_TEMPLATE = {
  uriTemplate: "opendata://files/{project}/{+path}",
  name: "opendata-files",
  title: "Exported results",
  description:
    'Results tools wrote with output: "file" (whole, not cut to the answer\'s size limit): opendata://files/{provider}/{path}',
  mimeType: "text/csv",
} as const;

/** What a server instance uses of the result exports. */
export type ExportStore = Pick<ResultExports, "forCaller" | "resourceTemplate">;

/**
 * {@linkcode ResultExports} made on first use: the same files, resource template and errors,
 * its module loaded by the first write, listing, completion or read. `load` makes the real
 * store (default: imports exports.ts); tests count its calls.
 */
export class DeferredExports implements ExportStore {
  #options: ResultExportsOptions;
  #load: (options: ResultExportsOptions) => Promise<ExportStore>;
  #store: Promise<ExportStore> | undefined;
  #template: Promise<ResourceTemplateDefinition> | undefined;

  constructor(
    options: ResultExportsOptions,
    load: (options: ResultExportsOptions) => Promise<ExportStore> = async (o) =>
      new (await import("./exports.ts")).ResultExports(o),
  ) {
    this.#options = options;
    this.#load = load;
    // Files written by earlier runs count against their clients' quotas before anything loads
    // the exports: a recount loads them, and their storage then counts itself.
    options.quota?.addStorage({ bytesOf: () => 0, recount: async () => void (await this.#real()) });
  }

  /** The real store, made once (a failed load is tried again by the next use). */
  #real(): Promise<ExportStore> {
    this.#store ??= this.#load(this.#options).catch((e) => {
      this.#store = undefined;
      throw e;
    });
    return this.#store;
  }

  #realTemplate(): Promise<ResourceTemplateDefinition> {
    this.#template ??= this.#real().then((s) => s.resourceTemplate()).catch((e) => {
      this.#template = undefined;
      throw e;
    });
    return this.#template;
  }

  forCaller(provider: string, owner: string | undefined, client?: string): ResultFiles {
    return {
      save: async (request: ExportRequest) =>
        (await this.#real()).forCaller(provider, owner, client).save(request),
    };
  }

  resourceTemplate(): ResourceTemplateDefinition {
    const real = () => this.#realTemplate();
    return {
      ...EXPORTS_TEMPLATE,
      list: async (extra: McpExtra) => await (await real()).list!(extra),
      complete: { project: async (value: string) => await (await real()).complete!["project"]!(value) },
      read: async (uri, variables, extra) => await (await real()).read(uri, variables, extra),
      fileSource: async (variables, extra) => await (await real()).fileSource!(variables, extra),
    };
  }
}
