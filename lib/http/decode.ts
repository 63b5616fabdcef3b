// Turning an upstream body into text or JSON for HttpClient (fetch_client.ts): charset, HTML
// where JSON was expected, empty or cut-off JSON and nesting too deep are DECODE_ERRORs.
import { UpstreamError } from "../errors.ts";
import { readCapped } from "./_body.ts";
import { JsonDepthScan, jsonTooDeepAt, tooDeep } from "./json_depth.ts";
import { decodeUtf8Sliced, firstNonBlank, JsonSliceError, Pace, parseJsonSliced } from "./json_sliced.ts";

/** A live answer's status, content type and whole body, as one attempt read it. */
export interface RawResponse {
  status: number;
  contentType: string;
  body: Uint8Array;
  url: string;
  headers?: Headers;
}

const SNIPPET_BYTES = 4096;

/** Who decodes: named in the errors. */
interface Upstream {
  provider: string;
  upstreamName: string;
}

/** The first bytes of an error body, for the error's message; "" when it cannot be read. */
export async function readSnippet(response: Response): Promise<string> {
  try {
    const bytes = await readCapped(response, SNIPPET_BYTES, { truncate: true });
    return new TextDecoder().decode(bytes);
  } catch {
    await response.body?.cancel().catch(() => {});
    return "";
  }
}

export function decodeText(raw: RawResponse, fallback: string | undefined, o: Upstream): string {
  const charset = /charset=["']?([\w-]+)/i.exec(raw.contentType)?.[1] ?? fallback ?? "utf-8";
  try {
    return new TextDecoder(charset, { fatal: true }).decode(raw.body);
  } catch {
    throw new UpstreamError(
      "DECODE_ERROR",
      `${o.upstreamName} sent text that is not valid ${charset}`,
      { provider: o.provider, url: raw.url, status: raw.status },
    );
  }
}

/** Bodies above this many bytes are decoded in slices ({@linkcode decodeJson}). */
export const SLICED_DECODE_BYTES = 1024 * 1024;

/** What bounds a decode: the call's cancellation and deadline (runtime clock), checked between slices. */
export interface DecodeBudget {
  signal?: AbortSignal;
  /** When the tool call must have answered, in milliseconds of `now`'s clock. */
  deadline?: number;
  now?: () => number;
}

/**
 * The body as JSON. Bodies up to {@linkcode SLICED_DECODE_BYTES} are decoded in one piece; bigger
 * ones (a 13 MB GeoJSON feature) in slices of a few milliseconds that give the event loop a turn
 * in between (json_sliced.ts), stopping when the call is cancelled or past its deadline. Both ways
 * give the same value and the same errors.
 */
export function decodeJson<T>(raw: RawResponse, o: Upstream, budget: DecodeBudget = {}): Promise<T> {
  if (raw.body.byteLength <= SLICED_DECODE_BYTES) {
    try {
      return Promise.resolve(decodeJsonWhole<T>(raw, o));
    } catch (e) {
      return Promise.reject(e);
    }
  }
  return decodeJsonSliced<T>(raw, o, budget);
}

function decodeJsonWhole<T>(raw: RawResponse, o: Upstream): T {
  const text = new TextDecoder().decode(raw.body);
  const ct = raw.contentType.toLowerCase();
  const looksHtml = ct.includes("html") || /^\s*<(!doctype|html)/i.test(text);
  if (looksHtml) throw htmlPage(raw, o);
  const deep = jsonTooDeepAt(text);
  if (deep >= 0) {
    throw tooDeep(o.upstreamName, deep, { provider: o.provider, url: raw.url, status: raw.status });
  }
  try {
    return JSON.parse(text.replace(/^\uFEFF/, "")) as T;
  } catch {
    throw notJson(raw, o, text.trim() === "");
  }
}

async function decodeJsonSliced<T>(raw: RawResponse, o: Upstream, budget: DecodeBudget): Promise<T> {
  const pace = new Pace(() => stopIfDue(raw, o, budget));
  stopIfDue(raw, o, budget);
  const text = await decodeUtf8Sliced(raw.body, pace);
  const first = await firstNonBlank(text, pace);
  const looksHtml = raw.contentType.toLowerCase().includes("html") ||
    (first >= 0 && /^<(!doctype|html)/i.test(text.slice(first, first + 9)));
  if (looksHtml) throw htmlPage(raw, o);
  try {
    return await parseJsonSliced(text, pace) as T;
  } catch (e) {
    if (!(e instanceof JsonSliceError)) throw e;
    // The parser meets a bracket too deep only where the text before it is valid, so its offset
    // is the depth check's; after a syntax error the rest is checked as the whole-body path does.
    const deep = e.kind === "deep" ? e.offset : await tooDeepAtSliced(text, pace);
    if (deep >= 0) {
      throw tooDeep(o.upstreamName, deep, { provider: o.provider, url: raw.url, status: raw.status });
    }
    throw notJson(raw, o, first < 0);
  }
}

async function tooDeepAtSliced(text: string, pace: Pace): Promise<number> {
  const scan = new JsonDepthScan();
  for (let at = 0; at < text.length; at += 1 << 20) {
    const deep = scan.scan(text, at, Math.min(text.length, at + (1 << 20)));
    if (deep >= 0) return deep;
    if (pace.due()) await pace.pause();
  }
  return -1;
}

/** Throws when the call was cancelled or its deadline has passed: decoding for nobody stops. */
function stopIfDue(raw: RawResponse, o: Upstream, budget: DecodeBudget): void {
  if (budget.signal?.aborted) {
    throw new UpstreamError("CANCELLED", "The call was cancelled by the client", {
      provider: o.provider,
      url: raw.url,
    });
  }
  if (budget.deadline !== undefined && (budget.now ?? Date.now)() >= budget.deadline) {
    throw new UpstreamError(
      "TIMEOUT",
      `${o.upstreamName}'s answer (${formatBytes(raw.body.byteLength)}) was still being read at this tool ` +
        "call's deadline",
      {
        provider: o.provider,
        url: raw.url,
        status: raw.status,
        retryable: true,
        hint:
          "Ask for less in one call (a smaller limit, a narrower area or date range), or try again when the " +
          "server is less busy",
      },
    );
  }
}

function htmlPage(raw: RawResponse, o: Upstream): UpstreamError {
  return new UpstreamError(
    "DECODE_ERROR",
    `${o.upstreamName} returned an HTML page instead of JSON (HTTP ${raw.status})`,
    {
      provider: o.provider,
      url: raw.url,
      status: raw.status,
      retryable: false,
      hint: "The upstream may be down for maintenance or behind a captive page; try again later",
    },
  );
}

function notJson(raw: RawResponse, o: Upstream, empty: boolean): UpstreamError {
  return new UpstreamError(
    "DECODE_ERROR",
    empty
      ? `${o.upstreamName} returned an empty body where JSON was expected`
      : `${o.upstreamName} returned a body that is not valid JSON (it may have been cut off)`,
    {
      provider: o.provider,
      url: raw.url,
      status: raw.status,
      retryable: false,
      hint: "Try again; if it persists the upstream is sending broken data",
    },
  );
}

/** A byte count for messages: KiB below a MiB, MiB above. */
export function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round(n / 1024 / 1024)} MiB` : `${Math.round(n / 1024)} KiB`;
}
