/**
 * The error kinds a tool result can carry. Providers may add their own (FRED's
 * `INVALID_OPERATION`, `MISSING_PARAMETER`), so the type stays open.
 */
export type ErrorType =
  | "VALIDATION_ERROR"
  | "NOT_FOUND"
  | "TRANSPORT_ERROR"
  | "TIMEOUT"
  | "DECODE_ERROR"
  | "API_ERROR"
  | "RATE_LIMITED"
  | "CIRCUIT_OPEN"
  /** An upstream redirected to an origin that is not configured (SSRF and key-leak guard). */
  | "UPSTREAM_REDIRECT_REFUSED"
  | "CONFIGURATION_ERROR"
  | "CANCELLED"
  | "INTERNAL_ERROR"
  | (string & Record<never, never>);

/** The structured error payload of a failed tool call (the error contract). */
export interface ErrorPayload {
  error_type: ErrorType;
  message: string;
  retryable: boolean;
  status?: number;
  message_id?: string;
  retry_after_s?: number;
  /** The argument at fault, for validation errors. */
  field?: string;
  /** What to try next. */
  hint?: string;
  /** The calls that would fix or get round the failure, ready to send (docs/CLIENTS.md). */
  next_calls?: { tool: string; arguments: Record<string, unknown>; for?: string }[];
}

/** Options for {@linkcode ToolError}. */
export interface ToolErrorOptions {
  retryable?: boolean;
  status?: number;
  messageId?: string;
  retryAfterS?: number;
  field?: string;
  hint?: string;
  /** Calls that fix or get round the failure (the core routes them for the caller's surface). */
  next?: { tool: string; arguments: Record<string, unknown>; for?: string }[];
  /**
   * The arguments that correct the failed call (undefined: leave that one out): the core names the
   * same call with them as the first next call, so a wrong value is fixed in one step.
   */
  fix?: Record<string, unknown>;
  cause?: unknown;
}

/** A failure reported to the model as an `isError` tool result, never as a crash. */
export class ToolError extends Error {
  readonly errorType: ErrorType;
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly messageId: string | undefined;
  readonly retryAfterS: number | undefined;
  readonly field: string | undefined;
  readonly hint: string | undefined;
  readonly next: { tool: string; arguments: Record<string, unknown>; for?: string }[] | undefined;
  readonly fix: Record<string, unknown> | undefined;

  constructor(errorType: ErrorType, message: string, options: ToolErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ToolError";
    this.errorType = errorType;
    this.retryable = options.retryable ?? false;
    this.status = options.status;
    this.messageId = options.messageId;
    this.retryAfterS = options.retryAfterS;
    this.field = options.field;
    this.hint = options.hint;
    this.next = options.next;
    this.fix = options.fix;
  }

  /** The payload of the error contract. */
  toPayload(): ErrorPayload {
    const payload: ErrorPayload = {
      error_type: this.errorType,
      message: this.message,
      retryable: this.retryable,
    };
    if (this.status !== undefined) payload.status = this.status;
    if (this.messageId !== undefined) payload.message_id = this.messageId;
    if (this.retryAfterS !== undefined) payload.retry_after_s = this.retryAfterS;
    if (this.field !== undefined) payload.field = this.field;
    if (this.hint !== undefined) payload.hint = this.hint;
    if (this.next?.length) payload.next_calls = this.next;
    return payload;
  }
}

/** Options for {@linkcode UpstreamError}. */
export interface UpstreamErrorOptions extends ToolErrorOptions {
  /** The provider id whose upstream failed. */
  provider: string;
  /** The upstream URL with secrets removed. */
  url?: string;
  /** The start of the response body, for providers that read error details from it. */
  body?: string;
  /** The response's content type, when there was a response. */
  contentType?: string;
  /** For `CIRCUIT_OPEN`: the error type of the last failed call that counted towards it. */
  lastErrorType?: ErrorType;
}

/** An upstream call failed: transport, timeout, HTTP status, decoding, breaker, rate limit or redirect policy. */
export class UpstreamError extends ToolError {
  readonly provider: string;
  readonly url: string | undefined;
  readonly body: string | undefined;
  readonly contentType: string | undefined;
  readonly lastErrorType: ErrorType | undefined;

  constructor(errorType: ErrorType, message: string, options: UpstreamErrorOptions) {
    super(errorType, message, options);
    this.name = "UpstreamError";
    this.provider = options.provider;
    this.url = options.url;
    this.body = options.body;
    this.contentType = options.contentType;
    this.lastErrorType = options.lastErrorType;
  }
}

/** A configuration value is invalid: the CLI exits 2 and names `path`. */
export class ConfigError extends Error {
  /** Dotted path of the offending key, e.g. `providers.boj.timeout`. */
  readonly path: string;

  constructor(path: string, message: string) {
    super(message);
    this.name = "ConfigError";
    this.path = path;
  }
}

/** The command line is wrong: the CLI exits 2 with the message and a pointer to `--help`. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * A failure in a few words for a notice or a log line: `ERROR_TYPE: message` for an error that
 * carries an error type (a {@linkcode ToolError}), its message for any other error.
 */
export function describeError(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const type = (e as { errorType?: unknown }).errorType;
  return typeof type === "string" ? `${type}: ${e.message}` : e.message;
}
