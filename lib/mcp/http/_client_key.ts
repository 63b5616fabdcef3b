// Who a client is, for every per-client limit (sessions, connections, rate limits, listen
// streams, and the jobs, projects and bytes a provider keeps for it): one key per principal
// when authentication names one (connections and the rate limit are counted before credentials
// are checked, so always by address), else one per address, where IPv6 addresses share a key per
// network prefix (a /64 by default: one host usually holds a whole /64, so counting each of its
// 2^64 addresses apart would give it 2^64 shares).

/** Options for {@linkcode clientKey}. */
export interface ClientKeyOptions {
  /** Bits of an IPv6 address that name one client (default 64; 128 counts every address apart). */
  ipv6Prefix?: number;
  /**
   * The authenticated principal naming one user, when there is one (e.g. an OAuth subject):
   * then every limit follows the user rather than the address. A token shared by everyone
   * names no one and is not passed here.
   */
  principal?: string;
}

/**
 * The key every per-client limit counts under: `principal:<p>` for an authenticated user,
 * else `ip:<address>` for IPv4 (IPv4-mapped IPv6 addresses included) and `ip:<prefix>::/<n>`
 * for IPv6. Anything that does not parse as an address is its own key.
 */
export function clientKey(address: string, options: ClientKeyOptions = {}): string {
  if (options.principal !== undefined && options.principal !== "") return `principal:${options.principal}`;
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  if (!bare.includes(":")) return `ip:${bare}`;
  const groups = ipv6Groups(bare);
  if (!groups) return `ip:${bare}`;
  // ::ffff:a.b.c.d is an IPv4 client on a dual-stack socket: count it as that IPv4 address.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `ip:${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
  }
  const prefix = Math.max(0, Math.min(128, Math.trunc(options.ipv6Prefix ?? 64)));
  if (prefix === 128) return `ip:${groups.map((g) => g.toString(16)).join(":")}`;
  const masked = groups.map((g, i) => {
    const bits = Math.max(0, Math.min(16, prefix - i * 16));
    return bits === 0 ? 0 : g & (0xffff << (16 - bits)) & 0xffff;
  });
  return `ip:${masked.map((g) => g.toString(16)).join(":")}/${prefix}`;
}

/** The eight 16-bit groups of an IPv6 address (zone dropped), or undefined if it is not one. */
export function ipv6Groups(text: string): number[] | undefined {
  let s = text.split("%")[0]!.toLowerCase();
  // A trailing dotted IPv4 part stands for the last two groups.
  const v4 = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (v4) {
    const octets = v4.slice(2, 6).map(Number);
    if (octets.some((o) => o > 255)) return undefined;
    s = `${v4[1]}${((octets[0]! << 8) | octets[1]!).toString(16)}:${
      ((octets[2]! << 8) | octets[3]!).toString(16)
    }`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const part = (h: string): string[] => h === "" ? [] : h.split(":");
  const head = part(halves[0]!);
  const tail = halves.length === 2 ? part(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  const groups: number[] = [];
  for (const g of all) {
    if (!/^[0-9a-f]{1,4}$/.test(g)) return undefined;
    groups.push(parseInt(g, 16));
  }
  return groups;
}
