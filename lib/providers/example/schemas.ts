// What the example tools share.

/** Both example tools only read, and reach nothing outside the server. */
export const READ_ONLY = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: false,
} as const;
