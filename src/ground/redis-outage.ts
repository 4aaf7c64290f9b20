/**
 * Whether an error is ioredis giving up on a connection (Redis went away), or an error
 * of ours wrapping one (its `cause`): the one test the CLI's wait for Redis, its failure
 * message and the batch log line all use. Only ioredis' own errors: an ECONNREFUSED may
 * as well come from a database source.
 */
export function isRedisOutage(err: unknown): boolean {
  for (let e = err; typeof e === 'object' && e !== null; e = (e as { cause?: unknown }).cause) {
    const { name, message } = e as { name?: unknown; message?: unknown };
    if (name === 'MaxRetriesPerRequestError') return true;
    if (
      typeof message === 'string' &&
      /^Connection is closed\.?$|max retries per request limit/.test(message)
    )
      return true;
  }
  return false;
}
