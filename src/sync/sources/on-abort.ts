/** Runs a cleanup when a run is aborted, for sources whose waits an AbortSignal cannot reach. */

/**
 * Calls `stop` once if `signal` aborts (at once if it already has); the returned function
 * removes the listener when the read ends first.
 */
export function onAbort(signal: AbortSignal | undefined, stop: () => void): () => void {
  if (signal === undefined) return () => undefined;
  if (signal.aborted) {
    stop();
    return () => undefined;
  }
  signal.addEventListener('abort', stop, { once: true });
  return () => signal.removeEventListener('abort', stop);
}
