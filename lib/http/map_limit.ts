// Bounded fan-out: a tool that makes several upstream requests for one answer (one per dataset,
// one per layer, one per feature) keeps only a few in flight, so one call cannot flood an
// upstream or use up its rate window at once.

/** Maps `items` with at most `n` calls in flight; the results keep the order of `items`. */
export async function mapLimit<T, R>(
  items: readonly T[],
  n: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}
