// The MCP vocabulary the core's layers share: the request context handlers receive, content
// blocks, resources, resource templates and prompts. It imports only the SDK (sdk.ts), so the
// output layer (result files, resource links, provenance) can use it without importing the
// provider contract (provider.ts), which in turn builds on the output layer.
import type {
  CallToolResult,
  GetPromptResult,
  InputRequiredResult,
  ReadResourceResult,
  ServerContext,
} from "./sdk.ts";

/**
 * The MCP SDK's per-request context (`mcpReq`: id, signal, `_meta`, input responses, request
 * state), plus who calls (`owner`, as in `ToolCallContext.owner`) for resource and
 * prompt handlers.
 */
export type McpExtra = ServerContext & { owner?: string };

/** A content block of a tool result. */
export type ContentBlock = CallToolResult["content"][number];

/** A fixed resource. */
export interface ResourceDefinition {
  uri: string;
  name: string;
  title?: string;
  description: string;
  mimeType: string;
  /**
   * Clients may subscribe to it (`resources/subscribe`). The core records subscriptions per
   * session; no provider announces changes yet, so no `notifications/resources/updated` is sent.
   */
  subscribable?: boolean;
  read(uri: URL, extra: McpExtra): Promise<ReadResourceResult | InputRequiredResult>;
}

/** A family of resources described by an RFC 6570 template. */
export interface ResourceTemplateDefinition {
  uriTemplate: string;
  name: string;
  title?: string;
  description: string;
  mimeType: string;
  /** Lists concrete resources of this template for `resources/list`, if enumerable. */
  list?(extra: McpExtra): Promise<{ uri: string; name: string; description?: string; mimeType?: string }[]>;
  /** Completion per template variable. */
  complete?: Record<string, (value: string) => string[] | Promise<string[]>>;
  read(
    uri: URL,
    variables: Record<string, string | string[]>,
    extra: McpExtra,
  ): Promise<ReadResourceResult | InputRequiredResult>;
  /**
   * For a template of result files: where one file's data came from, as its writer recorded it
   * (`opendata_read` names it with the provider's licence). Absent: the template's provider.
   */
  fileSource?(variables: Record<string, string | string[]>, extra: McpExtra): Promise<FileSource>;
}

/** Where a result file came from, as far as its own metadata says. */
export interface FileSource {
  /** Provider id of the data, when the template serves files of several (the result exports). */
  provider?: string;
  /** The request the file was written from: its URL (without secrets), or what was asked. */
  request?: string;
}

/** A prompt template; arguments are strings as MCP defines them. */
export interface PromptDefinition {
  name: string;
  title?: string;
  description: string;
  arguments: readonly {
    name: string;
    description: string;
    required?: boolean;
    /** Prefix completion for this argument. */
    complete?: (value: string) => string[] | Promise<string[]>;
  }[];
  render(
    args: Record<string, string>,
    extra: McpExtra,
  ): Promise<GetPromptResult | InputRequiredResult> | GetPromptResult | InputRequiredResult;
}
