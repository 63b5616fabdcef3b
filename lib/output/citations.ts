// Citations (docs/ARCHITECTURE.md, provenance): each upstream request an answer used, kept for a
// day under a short id in the response cache's store (shared when replicas share Redis), and the
// `opendata://citation/{provider}/{id}` resource template that reads one back, ready to replay.
// Apart from provenance.ts so that a start, which registers the template, loads none of the rest.
import { z } from "zod";
import type { UpstreamCall } from "../http/request_scope.ts";
import type { ResourceTemplateDefinition } from "../mcp/protocol.ts";
import type { CacheStore } from "../http/cache.ts";
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError } from "../mcp/sdk.ts";
import { jsonTooDeepAt } from "../http/json_depth.ts";

/** How long a citation stays readable: a day. */
export const CITATION_TTL_MS = 24 * 60 * 60 * 1000;

/** URI prefix of citations. */
export const CITATION_PREFIX = "opendata://citation/";

/** Where citations are kept: the shared cache store when replicas share one, else in process. */
export interface CitationStore {
  store: CacheStore;
  /** Milliseconds a citation stays readable. */
  ttlMs: number;
  now(): number;
  /**
   * The hosts (`host[:port]`) provider `provider` may be asked, as its allowlist says; a stored
   * citation whose URL names another host is refused. Absent: any http(s) host.
   */
  hostsOf?(provider: string): readonly string[] | undefined;
  /**
   * Where citations live: "shared" (Redis: every replica, a day) or "process" (this process's
   * memory: gone when it ends, as a stdio server does with its client). The not-found message
   * says which, so a citation from an earlier run is not reported as expired. Default "process".
   */
  kept?: "shared" | "process";
}

/** What a citation keeps: the request with secrets left out, its answer's hash and time. */
export type Citation =
  & Pick<UpstreamCall, "provider" | "source" | "method" | "url" | "body" | "secrets" | "sha256">
  & { retrieved_at: string };

const KEY_PREFIX = "citation ";

/** The methods an upstream request is ever made with; a stored citation with another is refused. */
const METHODS = ["GET", "POST", "HEAD"] as const;

const text = (max: number) => z.string().max(max);

/**
 * A citation as read back from the store, which replicas share with whoever can write to Redis:
 * every field is checked before any is shown, and none becomes a command unquoted.
 */
const citationSchema = z.object({
  provider: z.string().regex(/^[a-z0-9_-]{1,64}$/),
  source: text(200),
  method: z.enum(METHODS),
  url: text(8192),
  body: text(65_536).optional(),
  secrets: z.array(z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/)).max(50),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  retrieved_at: z.string().regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
});

/** Keeps one request as a citation; its URI is `opendata://citation/<provider>/<id>`. */
export async function keepCitation(call: UpstreamCall, citations: CitationStore): Promise<string> {
  const c: Citation = {
    provider: call.provider,
    source: call.source,
    method: call.method,
    url: call.url,
    ...(call.body === undefined ? {} : { body: call.body }),
    secrets: call.secrets,
    sha256: call.sha256,
    retrieved_at: iso(call.retrievedAt),
  };
  const json = JSON.stringify(c);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(json));
  const id = [...new Uint8Array(digest).slice(0, 10)].map((b) => b.toString(16).padStart(2, "0")).join("");
  const now = citations.now();
  try {
    await citations.store.set(`${KEY_PREFIX}${id}`, {
      status: 200,
      contentType: "application/json",
      body: new TextEncoder().encode(json),
      storedAt: now,
      expiresAt: now + citations.ttlMs,
    });
  } catch {
    // A store out of reach loses the citation, not the answer: its provenance still holds the
    // request.
  }
  return `${CITATION_PREFIX}${call.provider}/${id}`;
}

/** The `opendata://citation/{provider}/{id}` resource template: an answer's exact request, to replay. */
export function citationTemplate(userAgent: string, citations: CitationStore): ResourceTemplateDefinition {
  return {
    uriTemplate: `${CITATION_PREFIX}{provider}/{id}`,
    name: "opendata-citation",
    title: "Citation of an upstream answer",
    description:
      "The exact upstream request behind an answer's provenance (secrets left out), with the SHA-256 of the body it returned, to replay and compare",
    mimeType: "application/json",
    async read(uri, variables) {
      const id = String(variables["id"] ?? "");
      const missing = () =>
        new ResourceNotFoundError(
          uri.href,
          `No such citation here: ${
            citations.kept === "shared"
              ? "it expired (citations are kept a day) or was made by another deployment"
              : "citations live in the memory of the server process that made them, so one from an earlier run " +
                "(a stdio server starts anew with each client session) or older than a day is gone"
          }. Call the tool again with the same arguments for a fresh answer and citation; the answer's provenance.permalink names the source`,
        );
      if (!/^[0-9a-f]{20}$/.test(id)) throw missing();
      let entry;
      try {
        entry = await citations.store.get(`${KEY_PREFIX}${id}`, citations.now());
      } catch {
        throw new ProtocolError(
          ProtocolErrorCode.InternalError,
          "The citation store is out of reach: try again",
        );
      }
      if (!entry) throw missing();
      const c = parseCitation(new TextDecoder().decode(entry.body), citations);
      if (typeof c === "string") {
        throw new ResourceNotFoundError(
          uri.href,
          `The stored citation was refused: ${c}. Call the tool again with the same arguments for a fresh answer and citation`,
        );
      }
      const doc = {
        source: c.source,
        provider: c.provider,
        request: {
          method: c.method,
          url: c.url,
          ...(c.body === undefined ? {} : { body: c.body }),
          headers: { "user-agent": userAgent },
        },
        secrets_left_out: c.secrets,
        response: { sha256: c.sha256, retrieved_at: c.retrieved_at },
        replay: curl(c, userAgent),
        note: c.secrets.length
          ? `Replace the *** of ${
            c.secrets.map((s) => `"${s}"`).join(", ")
          } with your own value to replay; the SHA-256 matches while the upstream serves the same body`
          : "Replaying the request returns a body with this SHA-256 while the upstream serves the same data",
      };
      return {
        contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(doc, null, 2) }],
      };
    },
  };
}

/**
 * A stored citation checked field by field, its URL parsed and on its provider's hosts; else why
 * it is refused (said to the reader: it names no value from the record).
 */
export function parseCitation(json: string, citations: Pick<CitationStore, "hostsOf">): Citation | string {
  if (jsonTooDeepAt(json) >= 0) return "it is nested too deep";
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return "it is not JSON";
  }
  const parsed = citationSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return `its field "${issue?.path.join(".") || "record"}" is not valid`;
  }
  const c = parsed.data;
  let url: URL;
  try {
    url = new URL(c.url);
  } catch {
    return 'its field "url" is not a URL';
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return 'its field "url" is not http(s)';
  if (url.username !== "" || url.password !== "") return 'its field "url" carries credentials';
  const hosts = citations.hostsOf?.(c.provider);
  if (hosts !== undefined && !hosts.some((h) => sameSite(h, url.host))) {
    return `its field "url" names a host provider "${c.provider}" does not use`;
  }
  return c as Citation;
}

/**
 * Whether `host` is `allowed` or a sibling of it under the same parent domain (a provider with a
 * host per language, as Wikipedia's `no.` and `en.`, lists one); an address matches only itself.
 */
function sameSite(allowed: string, host: string): boolean {
  if (allowed === host) return true;
  const parent = (h: string) => {
    const name = h.replace(/:\d+$/, "");
    if (/^[\d.]+$/.test(name) || name.includes("[") || name.split(".").length < 3) return undefined;
    return `${name.slice(name.indexOf(".") + 1)}${h.slice(name.length)}`;
  };
  const p = parent(allowed);
  return p !== undefined && parent(host) === p;
}

/** A value as one shell word: single-quoted, each `'` closed, escaped and reopened. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A shell command that sends the same request (every value quoted). */
function curl(c: Citation, userAgent: string): string {
  const q = shellQuote;
  const parts = ["curl", "-sS", "-A", q(userAgent)];
  // Checked against a fixed set when read back, and quoted all the same.
  if (c.method !== "GET") parts.push("-X", q(c.method));
  if (c.body !== undefined) parts.push("--data-raw", q(c.body));
  parts.push(q(c.url));
  return parts.join(" ");
}

/** A time as ISO 8601 in whole seconds (UTC). */
export function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}
