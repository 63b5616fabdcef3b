// The MCP SDK, re-exported with its declaration files named explicitly: `deno check` does not
// find them through `npm:` specifiers on its own (SDK issue 2701) and would type it all as any.
// Server-side modules only: client imports widen the permissions the server needs.

// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.d.ts"
export { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/server/completable.d.ts"
export { completable } from "@modelcontextprotocol/sdk/server/completable.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/server/stdio.d.ts"
export { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/server/webStandardStreamableHttp.d.ts"
export { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/types.d.ts"
export {
  CallToolRequestSchema,
  ErrorCode,
  isInitializeRequest,
  isJSONRPCRequest,
  JSONRPCMessageSchema,
  LATEST_PROTOCOL_VERSION,
  ListToolsRequestSchema,
  McpError,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/types.d.ts"
export type {
  CallToolResult,
  GetPromptResult,
  JSONRPCMessage,
  LoggingLevel,
  ReadResourceResult,
  ServerNotification,
  ServerRequest,
  Tool,
  ToolAnnotations,
} from "@modelcontextprotocol/sdk/types.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/shared/protocol.d.ts"
export type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/shared/transport.d.ts"
export type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
