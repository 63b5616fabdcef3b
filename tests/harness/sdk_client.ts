// The MCP SDK's client side for tests, with declaration files named (see lib/mcp/sdk.ts).
// Kept out of lib/: client imports widen the permissions the server needs.

// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.d.ts"
export { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.d.ts"
export { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.d.ts"
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/client/sse.d.ts"
export { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/inMemory.d.ts"
export { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/shared/stdio.d.ts"
export { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/types.d.ts"
export {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ProgressNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/types.d.ts"
export type { CallToolResult, JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/shared/transport.d.ts"
export type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/client/auth.d.ts"
export { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/client/auth.d.ts"
export type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
