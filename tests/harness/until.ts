// Waiting in tests for what another process or replica does: poll, with a deadline that names
// what was awaited.

/**
 * Calls `probe` every `everyMs` until it gives a value other than `undefined` or `false`, and
 * resolves to that value; throws "Timed out waiting for <what>" after `ms`.
 */
export async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 10_000,
  everyMs = 20,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
