// Turning an upstream body into text or JSON for HttpClient (fetch_client.ts): charset, HTML
// where JSON was expected, empty or cut-off JSON and nesting too deep are DECODE_ERRORs.
import { UpstreamError } from "../errors.ts";
import { readCapped } from "./_body.ts";
import { jsonTooDeepAt, tooDeep } from "./json_depth.ts";

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

export function decodeJson<T>(raw: RawResponse, o: Upstream): T {
  const text = new TextDecoder().decode(raw.body);
  const ct = raw.contentType.toLowerCase();
  const looksHtml = ct.includes("html") || /^\s*<(!doctype|html)/i.test(text);
  if (looksHtml) {
    throw new UpstreamError(
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
  const deep = jsonTooDeepAt(text);
  if (deep >= 0) {
    throw tooDeep(o.upstreamName, deep, { provider: o.provider, url: raw.url, status: raw.status });
  }
  try {
    return JSON.parse(text.replace(/^\uFEFF/, "")) as T;
  } catch {
    throw new UpstreamError(
      "DECODE_ERROR",
      text.trim() === ""
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
}

/** A byte count for messages: KiB below a MiB, MiB above. */
export function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round(n / 1024 / 1024)} MiB` : `${Math.round(n / 1024)} KiB`;
}
