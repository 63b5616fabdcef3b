// Stored files over MCP: a remote client cannot read the server's disk, so every file a tool
// writes is also a resource (`<prefix>{project}/{+path}`), listed by `resources/list`, read by
// `resources/read`, and linked from the tool result with a `resource_link` block. Over HTTP a
// session lists and reads only the files of its own projects, as its tool calls see them.
import { ToolError } from "../errors.ts";
import type { ContentBlock, McpExtra, ResourceTemplateDefinition } from "../mcp/protocol.ts";
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError } from "../mcp/sdk.ts";
import type { ProjectStorage } from "./storage.ts";
import { mimeTypeOf } from "./row_writers.ts";

/** Options for {@linkcode fileResourceTemplate}. */
export interface FileResourceOptions {
  /** Registered name of the template, e.g. `fred-files`. */
  name: string;
  title: string;
  description: string;
  /** Largest file served through `resources/read`, in bytes. */
  maxBytes: number;
  /** Most files enumerated by `resources/list` (newest first). Default 200. */
  listLimit?: number;
  /** The provider whose data a project's files hold (the result exports: one project per provider). */
  providerOf?: (project: string) => string;
}

/** A resource template serving the files of `storage` (its URI prefix plus `{project}/{+path}`). */
export function fileResourceTemplate(
  storage: ProjectStorage,
  options: FileResourceOptions,
): ResourceTemplateDefinition {
  const prefix = storage.uriPrefix;
  return {
    uriTemplate: `${prefix}{project}/{+path}`,
    name: options.name,
    title: options.title,
    description: options.description,
    mimeType: "text/csv",
    async list(extra) {
      const files = await storage.forOwner(ownerOf(extra)).allFiles(options.listLimit ?? 200);
      return files.map((f) => ({
        uri: f.resource_uri,
        name: f.name,
        description: `${f.path} in project "${f.resource_uri.slice(prefix.length).split("/")[0]}" (${
          f.rows === null ? "" : `${f.rows} rows, `
        }${f.size_mb} MB)`,
        mimeType: mimeTypeOf(f.format),
      }));
    },
    complete: {
      project: async (value: string) =>
        (await storage.listProjects()).map((p) => p.name).filter((n) => n.startsWith(value)),
    },
    async read(uri, variables, extra) {
      const project = decode(variables["project"]);
      const path = decode(variables["path"]);
      let file: { path: string; size: number; format: string };
      try {
        file = await storage.forOwner(ownerOf(extra)).resolveFile(project, path);
      } catch (e) {
        if (e instanceof ToolError) {
          const message = `${e.message}${e.hint ? `. ${e.hint}` : ""}`;
          // A missing file is "resource not found" (-32602 with data.uri in every era).
          if (e.errorType === "NOT_FOUND") throw new ResourceNotFoundError(uri.href, message);
          throw new ProtocolError(ProtocolErrorCode.InvalidParams, message);
        }
        throw e;
      }
      if (file.size > options.maxBytes) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `The file is ${Math.ceil(file.size / 1_048_576)} MB, more than the ${
            Math.floor(options.maxBytes / 1_048_576)
          } MB served over MCP. Read it from the server's disk, or write a smaller extract`,
        );
      }
      // Files are masked as they are written; a file written before a secret was configured, or
      // put there by hand, is masked here too.
      const text = storage.secrets.mask(await Deno.readTextFile(file.path));
      return { contents: [{ uri: uri.href, mimeType: mimeTypeOf(file.format), text }] };
    },
    async fileSource(variables, extra) {
      const project = decode(variables["project"]);
      const record = await storage.forOwner(ownerOf(extra)).fileRecord(project, decode(variables["path"]))
        .catch(() => undefined);
      // FRED records the request's URL; the result exports what the file holds.
      const request = [record?.["source_url"], record?.["description"]].find((v) =>
        typeof v === "string" && v
      );
      return {
        ...(options.providerOf ? { provider: options.providerOf(project) } : {}),
        ...(typeof request === "string" ? { request } : {}),
      };
    },
  };
}

/** The `resource_link` block a tool result carries for a file it wrote. */
export function resourceLink(file: {
  uri: string;
  name: string;
  format: string;
  bytes: number;
  description: string;
}): ContentBlock {
  return {
    type: "resource_link",
    uri: file.uri,
    name: file.name,
    mimeType: mimeTypeOf(file.format),
    description: file.description,
    size: file.bytes,
  };
}

/** The owner of a resource request: as for tool calls (`ToolCallContext.owner`), the HTTP session. */
function ownerOf(extra: McpExtra): string | undefined {
  return extra.owner;
}

function decode(value: string | string[] | undefined): string {
  const raw = Array.isArray(value) ? value.join(",") : value ?? "";
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `The resource URI part "${raw}" is not valid percent-encoding`,
    );
  }
}
