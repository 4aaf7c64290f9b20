/**
 * Runs `work` on each item with at most `size` at once. After the first failure no item
 * is started any more; those in flight finish, then that failure is thrown.
 */
export async function inPool<T>(
  items: readonly T[],
  size: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const item = items[next++]!;
      try {
        await work(item);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, lane));
  if (failure !== undefined) throw failure.err;
}
