// The SSRF guard: refuses URLs that would make the server reach its own machine, its private
// network or a cloud metadata service. It plugs into HttpClient's `checkUrl` hook, which calls
// it for every URL fetched (redirect targets included), and it can vet a URL an upstream hands
// over (an OGC `next` link) before it is followed.
//
// What it cannot do: the address is checked when the name is resolved here, and `fetch`
// resolves it again. A host whose DNS answer changes in between (DNS rebinding) slips past.
// The process's `--allow-net` allowlist is the second line: a host outside it cannot be
// fetched at all.

/** Checks a URL before it is fetched (HttpClient's `checkUrl` hook); throws to refuse. */
export type UrlCheck = (url: URL) => void | Promise<void>;

/** A URL was refused by the guard; HttpClient reports it as a VALIDATION_ERROR. */
export class SsrfError extends Error {
  /** The host that was refused. */
  readonly host: string;
  /** Why, in a few words ("a loopback address (127.0.0.0/8)"). */
  readonly reason: string;

  constructor(host: string, reason: string, message?: string) {
    super(message ?? `Refused to fetch a URL on "${host}": ${reason}`);
    this.name = "SsrfError";
    this.host = host;
    this.reason = reason;
  }
}

/** Resolves a host name to its IP addresses (IPv4 dotted or IPv6 text). */
export type HostResolver = (hostname: string) => Promise<string[]>;

/** Options for {@linkcode checkUrl} and {@linkcode ssrfGuard}. */
export interface SsrfOptions {
  /**
   * Origins trusted by configuration (`https://api.ra.no`, or a test's loopback fake): URLs on
   * them skip every check. Give each provider's configured `base_url`; nothing else.
   */
  trustedOrigins?: readonly string[];
  /** Name resolution; default {@linkcode systemResolver}. Tests inject a table. */
  resolve?: HostResolver;
  /** How long resolution may take before the URL is refused. Default 5 s. */
  resolveTimeoutMs?: number;
}

const SCHEMES = new Set(["http:", "https:"]);

/**
 * Resolves through the operating system (`getaddrinfo`, via `node:dns`), so `/etc/hosts` and the
 * system's DNS answer as they do for `fetch`. Deno checks the looked-up host name against
 * `--allow-net`, exactly as for the fetch itself: no extra permission is needed, and a host
 * outside the allowlist fails to resolve, so the URL is refused (fail closed).
 * (`Deno.resolveDns` would need `--allow-net` for the name server's own address from
 * /etc/resolv.conf, which differs per machine, so it is not used.)
 */
export async function systemResolver(hostname: string): Promise<string[]> {
  const { lookup } = await import("node:dns/promises");
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => a.address);
}

/** An {@linkcode UrlCheck} for HttpClient's `checkUrl` hook. */
export function ssrfGuard(options: SsrfOptions = {}): UrlCheck {
  return (url) => checkUrl(url, options);
}

/** The origin (`scheme://host[:port]`) of a base URL, for `trustedOrigins`. */
export function originOf(url: string): string {
  return new URL(url).origin;
}

/**
 * Throws {@linkcode SsrfError} unless `url` is on a trusted origin or is an http(s) URL without
 * credentials whose host is a public name or address and resolves only to public addresses.
 */
export async function checkUrl(url: URL | string, options: SsrfOptions = {}): Promise<void> {
  const u = typeof url === "string" ? parseUrl(url) : url;
  if ((options.trustedOrigins ?? []).some((o) => sameOrigin(o, u))) return;
  const host = u.hostname;
  if (!SCHEMES.has(u.protocol)) {
    throw new SsrfError(
      host || u.protocol,
      `the scheme "${u.protocol.replace(/:$/, "")}" is not http or https`,
    );
  }
  if (u.username || u.password) {
    throw new SsrfError(host, "URLs carrying a user name or password are not fetched");
  }
  const literal = hostAddress(host);
  if (literal !== undefined) {
    const reason = blockedAddressReason(literal);
    if (reason) throw new SsrfError(host, reason);
    return;
  }
  const nameReason = blockedNameReason(host);
  if (nameReason) throw new SsrfError(host, nameReason);

  const resolve = options.resolve ?? systemResolver;
  let addresses: string[];
  try {
    addresses = await withTimeout(resolve(stripDot(host)), options.resolveTimeoutMs ?? 5000);
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    throw new SsrfError(
      host,
      `its address could not be checked (${detail.replace(/\s+/g, " ").slice(0, 120)})`,
    );
  }
  if (addresses.length === 0) throw new SsrfError(host, "it resolves to no address");
  for (const address of addresses) {
    const reason = blockedAddressReason(address);
    if (reason) throw new SsrfError(host, `it resolves to ${address}, ${reason}`);
  }
}

/**
 * Why an IP address must not be reached, or undefined when it is public. Takes IPv4 dotted
 * text or IPv6 text (brackets allowed); anything else is refused as unreadable.
 */
export function blockedAddressReason(address: string): string | undefined {
  const text = address.replace(/^\[|\]$/g, "");
  const v4 = parseIpv4(text);
  if (v4) return blockedIpv4Reason(v4);
  const v6 = parseIpv6(text);
  if (v6) return blockedIpv6Reason(v6);
  return `"${address}" is not a readable IP address`;
}

/** Whether `address` (IPv4 or IPv6 text) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  return blockedAddressReason(address) === undefined;
}

// [first address, prefix length, what it is]
const V4_BLOCKS: readonly [string, number, string][] = [
  ["0.0.0.0", 8, 'the unspecified "this network" range (0.0.0.0/8)'],
  ["10.0.0.0", 8, "a private address (10.0.0.0/8)"],
  ["100.64.0.0", 10, "a carrier-grade NAT address (100.64.0.0/10)"],
  ["127.0.0.0", 8, "a loopback address (127.0.0.0/8)"],
  ["169.254.169.254", 32, "the cloud metadata service address (169.254.169.254)"],
  ["169.254.0.0", 16, "a link-local address (169.254.0.0/16, where cloud metadata services live)"],
  ["172.16.0.0", 12, "a private address (172.16.0.0/12)"],
  ["192.0.0.0", 24, "an IETF protocol address (192.0.0.0/24, incl. the 192.0.0.192 metadata service)"],
  ["192.0.2.0", 24, "a documentation address (192.0.2.0/24)"],
  ["192.88.99.0", 24, "a 6to4 relay address (192.88.99.0/24)"],
  ["192.168.0.0", 16, "a private address (192.168.0.0/16)"],
  ["198.18.0.0", 15, "a benchmarking address (198.18.0.0/15)"],
  ["198.51.100.0", 24, "a documentation address (198.51.100.0/24)"],
  ["203.0.113.0", 24, "a documentation address (203.0.113.0/24)"],
  ["224.0.0.0", 4, "a multicast address (224.0.0.0/4)"],
  ["240.0.0.0", 4, "a reserved or broadcast address (240.0.0.0/4)"],
];

/** The blocks as numbers, built on the first check: a start that makes no request builds none. */
let v4Table: { net: number; mask: number; reason: string }[] | undefined;

function v4Blocks(): { net: number; mask: number; reason: string }[] {
  return v4Table ??= V4_BLOCKS.map(([base, bits, reason]) => {
    const b = parseIpv4(base)!;
    return { net: toUint32(b), mask: bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0, reason };
  });
}

function blockedIpv4Reason(octets: readonly number[]): string | undefined {
  const value = toUint32(octets);
  for (const { net, mask, reason } of v4Blocks()) {
    if (((value & mask) >>> 0) === net) return reason;
  }
  return undefined;
}

function blockedIpv6Reason(w: readonly number[]): string | undefined {
  const zeroUpTo = (n: number) => w.slice(0, n).every((x) => x === 0);
  const embedded = (hi: number, lo: number) => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];
  const viaV4 = (what: string, octets: number[]) => {
    const inner = blockedIpv4Reason(octets);
    return inner ? `${what} of ${octets.join(".")}, ${inner}` : undefined;
  };
  if (zeroUpTo(8)) return "the unspecified IPv6 address (::)";
  if (zeroUpTo(7) && w[7] === 1) return "the IPv6 loopback address (::1)";
  // ::ffff:a.b.c.d (IPv4-mapped) and ::a.b.c.d (the old IPv4-compatible form) reach the IPv4
  // address inside, so that address decides.
  if (zeroUpTo(5) && w[5] === 0xffff) {
    return viaV4("an IPv4-mapped IPv6 address", embedded(w[6]!, w[7]!));
  }
  if (zeroUpTo(6)) {
    return viaV4("an IPv4-compatible IPv6 address", embedded(w[6]!, w[7]!)) ??
      "an IPv4-compatible IPv6 address (::/96, deprecated)";
  }
  // ::ffff:0:a.b.c.d (SIIT, RFC 2765)
  if (zeroUpTo(4) && w[4] === 0xffff && w[5] === 0) {
    return viaV4("an IPv4-translated IPv6 address", embedded(w[6]!, w[7]!)) ??
      "an IPv4-translated IPv6 address (::ffff:0:0:0/96)";
  }
  const [a, b] = [w[0]!, w[1]!];
  // NAT64 (64:ff9b::/96) reaches the embedded IPv4 address.
  if (a === 0x64 && b === 0xff9b && w.slice(2, 6).every((x) => x === 0)) {
    return viaV4("a NAT64 address", embedded(w[6]!, w[7]!));
  }
  if (a === 0x64 && b === 0xff9b && w[2] === 1) return "a local-use NAT64 address (64:ff9b:1::/48)";
  if (a === 0x100 && b === 0 && w[2] === 0 && w[3] === 0) return "a discard-only address (100::/64)";
  if (a === 0x2001 && b === 0) return "a Teredo tunnel address (2001::/32), which hides an IPv4 address";
  if (a === 0x2001 && b === 0xdb8) return "a documentation address (2001:db8::/32)";
  if (a === 0x2002) {
    return viaV4("a 6to4 address", embedded(b, w[2]!));
  }
  if ((a & 0xfe00) === 0xfc00) {
    return "a unique local IPv6 address (fc00::/7, the private range, incl. the fd00:ec2::254 metadata service)";
  }
  if ((a & 0xffc0) === 0xfe80) return "a link-local IPv6 address (fe80::/10)";
  if ((a & 0xffc0) === 0xfec0) return "a site-local IPv6 address (fec0::/10)";
  if ((a & 0xff00) === 0xff00) return "a multicast IPv6 address (ff00::/8)";
  return undefined;
}

/** Four octets of a strict dotted-quad IPv4 address, or undefined. */
export function parseIpv4(text: string): number[] | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    out.push(n);
  }
  return out;
}

/** Eight 16-bit groups of an IPv6 address (with `::` and an IPv4 tail allowed), or undefined. */
export function parseIpv6(text: string): number[] | undefined {
  if (!/^[0-9a-f:.]+$/i.test(text) || !text.includes(":")) return undefined;
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groups = (part: string): number[] | undefined => {
    if (part === "") return [];
    const out: number[] = [];
    const pieces = part.split(":");
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (i === pieces.length - 1 && piece.includes(".")) {
        const v4 = parseIpv4(piece);
        if (!v4) return undefined;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else {
        if (!/^[0-9a-f]{1,4}$/i.test(piece)) return undefined;
        out.push(parseInt(piece, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return undefined;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}

/** The address a URL host names literally (IPv4 or bracketed IPv6), or undefined for a name. */
function hostAddress(host: string): string | undefined {
  if (host.startsWith("[") && host.endsWith("]")) return host;
  if (parseIpv4(host)) return host;
  // The URL parser already turns 0x7f.1, 2130706433 and 0177.0.0.1 into dotted form for http
  // and https; a numeric-looking name that is not dotted-quad is refused below as unreadable.
  if (/^[0-9.]+$/.test(host) || /^0x[0-9a-f.]+$/i.test(host)) return host;
  return undefined;
}

const BLOCKED_SUFFIXES = [".localhost", ".local", ".internal", ".home.arpa", ".localdomain"];
const BLOCKED_NAMES = new Set(["localhost", "metadata", "instance-data", "localhost.localdomain"]);

function blockedNameReason(host: string): string | undefined {
  const name = stripDot(host.toLowerCase());
  if (name === "") return "the URL has no host";
  if (BLOCKED_NAMES.has(name)) return "the name points at this machine or a metadata service";
  const suffix = BLOCKED_SUFFIXES.find((s) => name.endsWith(s));
  if (suffix) return `names under "${suffix.slice(1)}" are local or internal`;
  if (!name.includes(".")) return "a single-label name resolves through local search domains";
  return undefined;
}

function stripDot(host: string): string {
  return host.endsWith(".") ? host.slice(0, -1) : host;
}

function sameOrigin(trusted: string, url: URL): boolean {
  try {
    return new URL(trusted).origin === url.origin;
  } catch {
    return false;
  }
}

function parseUrl(text: string): URL {
  try {
    return new URL(text);
  } catch {
    throw new SsrfError(
      "",
      "it is not a valid absolute URL",
      "Refused to fetch a URL that is not a valid absolute URL",
    );
  }
}

function toUint32(octets: readonly number[]): number {
  return ((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Why a URL host that is an IP address literal must not be reached, or undefined for a public
 * address or a host name (names are only judged after resolution, by {@linkcode checkUrl}).
 */
export function addressReason(hostname: string): string | undefined {
  const literal = hostAddress(hostname);
  return literal === undefined ? undefined : blockedAddressReason(literal);
}
