/** The cursor a SQL source's job reads by when the spec leaves it to the defaults. */

/**
 * A SQL source's own cursorColumn is the job's one cursor (issue 23 §4: the two settings
 * together are refused): each run reads past the value the last one saved, as
 * `incremental` does for other sources. Not for a mirror or two-way job, which read the
 * whole table and only page by it, nor for the keyColumn default, which is paging only.
 */
export function sqlCursorAsIncremental(spec: {
  source: { type: string };
  target?: { mode: string } | undefined;
}): { cursor: string } | undefined {
  if (spec.source.type !== 'postgres' && spec.source.type !== 'mysql') return undefined;
  const { cursorColumn } = spec.source as { cursorColumn?: string };
  const mode = spec.target?.mode;
  if (cursorColumn === undefined || mode === undefined || mode === 'mirror' || mode === 'two-way')
    return undefined;
  return { cursor: cursorColumn };
}

/**
 * A table source without a cursor column pages by the job's incremental cursor when it
 * has one (each run then reads the rows changed since the last: paging by the key would
 * save a key as the cursor and never read an edited row again), else by its key.
 */
export function withDefaultCursor<S extends { type: string }>(
  source: S,
  incrementalCursor: string | undefined,
): S {
  if (source.type !== 'postgres' && source.type !== 'mysql') return source;
  const sql = source as S & { cursorColumn?: string; keyColumn?: string };
  if (sql.cursorColumn !== undefined) return source;
  const cursorColumn = incrementalCursor ?? sql.keyColumn;
  return cursorColumn === undefined ? source : { ...sql, cursorColumn };
}
