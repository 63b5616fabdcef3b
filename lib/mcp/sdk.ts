// The MCP SDK (v2, `@modelcontextprotocol/server`), re-exported from one place so the rest of the
// code names what it uses. Server-side modules only: client imports would widen the permissions
// the server needs.

export {
  classifyInboundRequest,
  completable,
  createMcpHandler,
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  isInitializeRequest,
  isInputRequiredResult,
  isJSONRPCRequest,
  isJSONRPCResponse,
  LATEST_PROTOCOL_VERSION,
  McpServer,
  parseJSONRPCMessage,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
  SUPPORTED_PROTOCOL_VERSIONS,
  UriTemplate,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
export type {
  CacheHint,
  CallToolResult,
  GetPromptResult,
  InputRequest,
  InputRequiredResult,
  InputResponseView,
  JSONRPCMessage,
  LoggingLevel,
  McpHttpHandler,
  McpRequestContext,
  ReadResourceResult,
  ServerContext,
  ServerEvent,
  ServerEventBus,
  Tool,
  ToolAnnotations,
  Transport,
  TransportSendOptions,
} from "@modelcontextprotocol/server";
export { serveStdio as serveSdkStdio } from "@modelcontextprotocol/server/stdio";
