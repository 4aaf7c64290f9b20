import { ConfigError } from '../../ground/errors.ts';

/**
 * An id as one path segment, percent-encoded. An empty id would silently address
 * another endpoint (`DELETE .../worksheets/` is not `DELETE .../worksheets/{id}`), so it
 * is refused before anything is sent. `where` names the method (`rows.update`) and
 * `name` the parameter, so the message says which call and argument are wrong.
 * Resource methods are `async` so that this throw rejects their promise: callers see
 * one failure path, also under `Promise.all` or `.catch()`.
 */
export function pathSegment(where: string, name: string, id: unknown): string {
  if (typeof id !== 'string' || id.trim() === '') {
    const got = typeof id === 'string' ? JSON.stringify(id) : typeof id;
    throw new ConfigError(`${where}: ${name} must be a non-empty string id, got ${got}`);
  }
  return encodeURIComponent(id);
}
