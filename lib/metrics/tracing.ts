// OpenTelemetry traces through Deno's built-in exporter (OTEL_DENO=true; OTLP over HTTP, set by
// the OTEL_EXPORTER_OTLP_* variables). Deno binds `npm:@opentelemetry/api` to its own tracer
// provider and context manager, so this module only makes spans: one per tool call, and a child
// per upstream attempt. It is loaded only when tracing is on: with it off, `tracing` is undefined
// and a call costs one `undefined` check.
//
// Deno also makes a span of its own for every `fetch`, whose attributes hold the URL whole
// (query string, so FRED's api_key, included). The upstream fetch therefore runs in a context
// whose parent is marked not sampled, so that, under a parent-based sampler, Deno's fetch span is
// not recorded: the span this module makes in its place carries the URL with secrets masked.
// `checkTracingEnv` refuses to start tracing without a parent-based sampler.
import type { Attributes, Context, Span, Tracer } from "@opentelemetry/api";
import { ConfigError } from "../errors.ts";

/** What the tool-call span learns when the call ends. */
export interface ToolCallNote {
  requestId?: string;
  status?: "ok" | "error";
  errorType?: string;
}

/** The W3C trace context a request carries (SEP-414 `_meta`, or the HTTP `traceparent` header). */
export interface TraceCarrier {
  traceparent?: string | undefined;
  tracestate?: string | undefined;
}

/** Spans for tool calls and upstream attempts. */
export interface Tracing {
  /** Runs `fn` in a tool-call span, joined to `carrier`'s trace when it names a valid one. */
  toolCall<T>(tool: string, carrier: TraceCarrier, note: ToolCallNote, fn: () => Promise<T>): Promise<T>;
  /** Runs one upstream attempt in a client span; `end` adds what the attempt met. */
  upstream<T>(name: string, attributes: Attributes, fn: (span: UpstreamSpan) => Promise<T>): Promise<T>;
  /** Runs `fn` (the fetch itself) where Deno's own fetch span is not sampled. */
  quiet<T>(fn: () => T): T;
}

/** What an upstream attempt adds to its span. */
export interface UpstreamSpan {
  set(key: string, value: string | number | boolean): void;
  fail(errorType: string): void;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The parts of a `traceparent` value, or undefined when it is not a valid one (W3C Trace Context). */
export function parseTraceparent(
  value: unknown,
): { traceId: string; spanId: string; traceFlags: number } | undefined {
  if (typeof value !== "string" || value.length > 512) return undefined;
  const m = TRACEPARENT.exec(value.trim());
  if (!m) return undefined;
  const [, version, traceId, spanId, flags, rest] = m;
  // Version ff is invalid; version 00 has nothing after the flags.
  if (version === "ff" || (version === "00" && rest)) return undefined;
  if (/^0+$/.test(traceId!) || /^0+$/.test(spanId!)) return undefined;
  return { traceId: traceId!, spanId: spanId!, traceFlags: parseInt(flags!, 16) & 1 };
}

/**
 * Whether the environment asks for traces, and refuses a setup that would export secrets: with
 * OTEL_DENO=true, Deno records every fetch with its whole URL unless the sampler is parent-based.
 */
export function checkTracingEnv(env: Record<string, string | undefined>): boolean {
  if (env["OTEL_DENO"] !== "true" || env["OTEL_DENO_TRACING"] === "false") return false;
  const sampler = env["OTEL_TRACES_SAMPLER"] ?? "";
  if (sampler === "always_off") return false;
  if (!sampler.startsWith("parentbased_")) {
    throw new ConfigError(
      "OTEL_TRACES_SAMPLER",
      `OTEL_DENO=true needs OTEL_TRACES_SAMPLER=parentbased_always_on (or another parentbased_ sampler)` +
        `${
          sampler ? `, not "${sampler}"` : ""
        }: Deno records every fetch with its whole URL, API keys included, ` +
        "and only a parent-based sampler lets this server leave those records out (its own upstream spans mask " +
        "secrets). Set it, or set OTEL_DENO_TRACING=false to export no traces",
    );
  }
  return true;
}

/** The process's tracing, once enabled. */
export let tracing: Tracing | undefined;

/** Loads the OpenTelemetry API (bound to Deno's exporter) and enables spans. */
export async function enableTracing(): Promise<Tracing> {
  if (tracing) return tracing;
  const api = await import("@opentelemetry/api");
  const tracer: Tracer = api.trace.getTracer("opendata-mcp");
  const { context, trace, SpanKind, SpanStatusCode, ROOT_CONTEXT, TraceFlags } = api;

  const parentOf = (carrier: TraceCarrier): Context => {
    const parsed = parseTraceparent(carrier.traceparent);
    if (!parsed) return context.active();
    const state = typeof carrier.tracestate === "string" && carrier.tracestate.length <= 512
      ? api.createTraceState(carrier.tracestate)
      : undefined;
    return trace.setSpanContext(ROOT_CONTEXT, {
      traceId: parsed.traceId,
      spanId: parsed.spanId,
      traceFlags: parsed.traceFlags,
      isRemote: true,
      ...(state ? { traceState: state } : {}),
    });
  };

  const end = (span: Span, failed: string | undefined): void => {
    if (failed) {
      span.setAttribute("error.type", failed);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  };

  tracing = {
    toolCall(tool, carrier, note, fn) {
      return tracer.startActiveSpan(
        `tools/call ${tool}`,
        { kind: SpanKind.SERVER, attributes: { "mcp.method.name": "tools/call", "gen_ai.tool.name": tool } },
        parentOf(carrier),
        async (span: Span) => {
          let failed: string | undefined;
          try {
            return await fn();
          } catch (e) {
            failed = e instanceof Error ? e.name : "Error";
            throw e;
          } finally {
            if (note.requestId) span.setAttribute("opendata.request_id", note.requestId);
            if (note.status) span.setAttribute("opendata.status", note.status);
            end(span, failed ?? (note.status === "error" ? note.errorType ?? "error" : undefined));
          }
        },
      );
    },
    upstream(name, attributes, fn) {
      return tracer.startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, async (span: Span) => {
        let failed: string | undefined;
        try {
          return await fn({
            set: (key, value) => span.setAttribute(key, value),
            fail: (errorType) => failed = errorType,
          });
        } catch (e) {
          failed ??= e instanceof Error ? e.name : "Error";
          throw e;
        } finally {
          end(span, failed);
        }
      });
    },
    quiet(fn) {
      const active = trace.getSpanContext(context.active());
      if (!active) return fn();
      const unsampled = trace.setSpanContext(context.active(), { ...active, traceFlags: TraceFlags.NONE });
      return context.with(unsampled, fn);
    },
  };
  return tracing;
}

/** Turns spans off again (tests). */
export function disableTracing(): void {
  tracing = undefined;
}
