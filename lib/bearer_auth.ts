// The bearer-token check of /mcp and /metrics, in the base layer so both listeners (lib/mcp/http
// and lib/metrics) share it without importing each other.

async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

/**
 * Checks `Authorization: Bearer <token>` in constant time: both sides are hashed first, so
 * neither the comparison time nor an early exit reveals the token's length or a prefix.
 */
export class BearerAuth {
  #expected: Promise<Uint8Array>;

  constructor(token: string) {
    this.#expected = digest(token);
  }

  /** `ok`, `missing` (no bearer credentials) or `invalid` (wrong token). */
  async check(authorization: string | null): Promise<"ok" | "missing" | "invalid"> {
    const match = authorization === null ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (!match) return "missing";
    const [given, expected] = await Promise.all([digest(match[1]!), this.#expected]);
    let diff = 0;
    for (let i = 0; i < expected.length; i++) diff |= expected[i]! ^ given[i]!;
    return diff === 0 ? "ok" : "invalid";
  }
}
