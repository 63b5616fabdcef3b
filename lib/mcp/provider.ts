import type { z } from "zod";
import type { Clock } from "../clock.ts";
import type { HttpRuntime } from "../http/runtime.ts";
import type { Logger } from "../log.ts";
import type {
  CallToolResult,
  GetPromptResult,
  ReadResourceResult,
  RequestHandlerExtra,
  ServerNotification,
  ServerRequest,
  ToolAnnotations,
} from "./sdk.ts";

/** What the core hands a provider when it is created. */
export interface ProviderContext<S> {
  /** This provider's validated config block. */
  settings: S;
  http: HttpRuntime;
  /** Logger carrying `provider: <id>`. */
  logger: Logger;
  clock: Clock;
  limits: Limits;
  /** Per-user data folder (files a provider writes go below it unless configured otherwise). */
  dataDir: string;
}

/** Output limits every tool keeps. */
export interface Limits {
  /** Most characters in one tool result's text (default 25,000). */
  characterLimit: number;
}

/** What a provider's `mod.ts` exports. */
export interface ProviderModule<S> {
  createProvider(context: ProviderContext<S>): Provider | Promise<Provider>;
}

/** A loaded provider: its tools, resources and prompts. */
export interface Provider {
  id: string;
  // deno-lint-ignore no-explicit-any
  tools: readonly ToolDefinition<any, any>[];
  resources?: readonly ResourceDefinition[];
  resourceTemplates?: readonly ResourceTemplateDefinition[];
  prompts?: readonly PromptDefinition[];
  /** Releases timers, jobs and files on shutdown. */
  close?(): Promise<void>;
}

/** The MCP SDK's per-request extras (signal, progress token, sendRequest, ...). */
export type McpExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Per-call context a tool handler receives. */
export interface ToolCallContext {
  /** Aborted when the client cancels the call. */
  signal: AbortSignal;
  /** Logger carrying `request_id` and `tool_name`: hand it to upstream calls. */
  logger: Logger;
  requestId: string;
  limits: Limits;
  /** Sends `notifications/progress` when the client asked for progress; otherwise does nothing. */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /** The SDK's extras, for sampling, elicitation and log notifications. */
  mcp: McpExtra;
  /**
   * Who started this call over HTTP: the session id, or a hash of the auth principal; undefined
   * over stdio, where one user owns everything. Work a call leaves behind (jobs, files) is
   * visible to the same owner only.
   */
  owner?: string;
}

/** A content block of a tool result. */
export type ContentBlock = CallToolResult["content"][number];

/** What a tool handler returns; the core turns it into a `CallToolResult`. */
export interface ToolOutput<O = Record<string, unknown>> {
  /** The text block the model reads (markdown or JSON, already within the character limit). */
  text: string;
  /** Matches the tool's `output` schema; sent as `structuredContent`. */
  structured?: O;
  /** Extra blocks after the text (images, `resource_link`s, embedded resources). */
  content?: ContentBlock[];
  /** Replaces the text block entirely (for tools whose first block is not text). */
  replaceContent?: boolean;
}

/** One tool, with zod schemas the core converts to JSON Schema. */
// deno-lint-ignore no-explicit-any
export interface ToolDefinition<I extends z.ZodType = z.ZodType, O extends z.ZodType | undefined = any> {
  name: string;
  title: string;
  /** What the tool does, when to use it, and what it returns: the model reads this. */
  description: string;
  /** A strict zod object with `.describe()` on every field. */
  input: I;
  /** The shape of `structuredContent`; omitted only for tools with free-form output. */
  output: O;
  annotations: ToolAnnotations;
  /** MCP tasks support; providers that forbid tasks say so (seed 001). */
  execution?: { taskSupport?: "forbidden" | "optional" | "required" };
  handler(
    args: z.output<I>,
    context: ToolCallContext,
  ): Promise<ToolOutput<O extends z.ZodType ? z.output<O> : Record<string, unknown>>>;
}

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
  read(uri: URL, extra: McpExtra): Promise<ReadResourceResult>;
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
  read(uri: URL, variables: Record<string, string | string[]>, extra: McpExtra): Promise<ReadResourceResult>;
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
  render(args: Record<string, string>, extra: McpExtra): Promise<GetPromptResult> | GetPromptResult;
}
