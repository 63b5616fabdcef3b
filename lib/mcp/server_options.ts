// The options of one MCP server instance and of one tool call (createServer in server.ts,
// callTool in tool_call.ts), in a module of their own so both import them one way, with the
// defaults both need (tool_call.ts is loaded on the first call, server.ts at start-up).
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { SecretMasker } from "../secrets.ts";
import { ResponseCache } from "../http/cache.ts";
import { ToolError } from "../errors.ts";
import { CITATION_TTL_MS } from "../output/citations.ts";
import type { CitationStore } from "../output/citations.ts";
import type { ResultFiles } from "../output/exports.ts";
import type { ExportStore } from "../output/deferred_exports.ts";
import type { McpExtra, ToolDefinition } from "./provider.ts";
import type { ViewOptions } from "./views/mod.ts";
import type { TaskEngine } from "./tasks/engine.ts";

/** Options for {@linkcode createServer}. */
export interface CreateServerOptions {
  logger: Logger;
  /** Most characters in a result's text block, and in its serialized `structuredContent`. */
  characterLimit: number;
  /**
   * false: clients that render no views get answers without `structuredContent` and tools without
   * `outputSchema` (server.structured_content off: the text block says everything, next calls included).
   */
  structuredContent?: boolean;
  /**
   * false: answers carry no `resource_link` blocks (server.resource_links off), for clients that
   * refuse them; the text still names each file and the opendata_read call that reads it.
   */
  resourceLinks?: boolean;
  name?: string;
  version?: string;
  /** Text sent with `initialize` / `server/discover` to orient the model. */
  instructions?: string;
  /**
   * Every tool call answers within this many milliseconds (default 45,000, under the ~60 s
   * request timeout of common clients); upstream requests the call makes end by then too.
   */
  callTimeoutMs?: number;
  /** The clock upstream deadlines are measured on (the HTTP runtime's); default the system clock. */
  clock?: Clock;
  /**
   * Seals and opens the `requestState` of multi round-trip calls (2026-07-28), with a key every
   * replica shares, so any replica can continue a call another one started.
   */
  requestState?: RequestStateSeal;
  /**
   * Who is calling, for work that must stay theirs (jobs, projects): the HTTP session or auth
   * principal. Absent over stdio, where one user owns everything.
   */
  owner?: string;
  /** The client the calls count against for per-client limits (see `ToolCallContext.client`). */
  client?: string;
  /** Where `output: "file"` results go; its resource template is served too. Absent: refused. */
  exports?: ExportStore;
  /** The User-Agent upstream requests carry, named in citations so a replay sends the same. */
  userAgent?: string;
  /** Where answers' citations are kept (shared by replicas with Redis); default: in process. */
  citations?: CitationStore;
  /**
   * Tools callable beyond those listed (the other toolsets of the enabled providers), by name,
   * with their provider's id: `tools/call` and `opendata_call` reach them.
   */
  // deno-lint-ignore no-explicit-any
  callable?: ReadonlyMap<string, { tool: ToolDefinition<any, any>; provider: string }>;
  /**
   * How the interactive views (MCP Apps) are built; served to clients that advertise the
   * extension, for the tools that name a view. Absent: views without map tiles.
   */
  views?: ViewOptions;
  /**
   * The instance answers `tools/list` and `tools/call` only: resources, templates, prompts and
   * views are not registered (see `NewServerOptions.toolsOnly`).
   */
  toolsOnly?: boolean;
  /**
   * The configured secrets, masked in every answer (text, structured content, error payloads)
   * and resource read before anything is cut to the limit. Absent: nothing is masked.
   */
  secrets?: SecretMasker;
  /**
   * Runs tool calls as tasks (the Tasks extension, docs/MCP.md "Tasks") for clients that declare
   * it, for tools whose `execution.taskSupport` allows. Absent: the extension is not offered.
   */
  tasks?: TaskEngine;
}

/** What {@linkcode callTool} needs beyond the server's options: the call's file store. */
export interface CallToolOptions extends CreateServerOptions {
  /** The result files of the tool's provider, as this caller writes them. */
  files?: ResultFiles;
  /**
   * The tools listed on the caller's surface: an answer's next calls to other tools go through
   * opendata_call. Absent: every tool counts as listed.
   */
  served?: ReadonlySet<string>;
}

/** Integrity protection for `requestState`: `seal` when asking, `open` (throws when forged or expired) on return. */
export interface RequestStateSeal {
  seal(payload: unknown, ctx: McpExtra): Promise<string>;
  open(state: string, ctx: McpExtra): Promise<unknown>;
}

/** The default per-call deadline: under the ~60 s that common MCP clients wait for an answer. */
export const DEFAULT_CALL_TIMEOUT_MS = 45_000;

/** Result files where none are configured (the CLI's `call`): saving is refused with the fix. */
export const NO_FILES: ResultFiles = {
  save: () =>
    Promise.reject(
      new ToolError("CONFIGURATION_ERROR", "This server keeps no result files here", {
        hint: 'Call the tool without output: "file", or through the server (stdio or HTTP)',
      }),
    ),
};

/** Citations of servers made without a store (tests, the CLI's `call`): in process, 4 MiB. */
let localCitations: CitationStore | undefined;

/** Where a server's answers keep their citations: the configured store, else one in process. */
export function citationsOf(options: CreateServerOptions): CitationStore {
  if (options.citations) return options.citations;
  localCitations ??= {
    store: new ResponseCache(4 * 1024 * 1024),
    ttlMs: CITATION_TTL_MS,
    now: () => Date.now(),
  };
  return localCitations;
}
