/**
 * A PostgreSQL table side whose writes carry a replication origin (`source.origin`):
 * each batch's transaction runs with the origin set up on the write session and reset
 * after, so a postgres-cdc job capturing the table with the same origin drops the batch
 * instead of writing it back to the worksheet (docs/cdc.md, "Two-way jobs").
 */
import type pg from 'pg';
import { withOrigin } from '../sources/replication-origin.ts';
import type { TableSide } from './table-side-types.ts';

/** `side` with every `write` marked with `origin` on the `writer` connection. */
export async function markedWithOrigin(
  side: TableSide,
  writer: pg.Client,
  origin: string,
  who: string,
): Promise<TableSide> {
  let role: string;
  try {
    const { rows } = await writer.query<{ role: string }>('SELECT session_user AS role');
    role = rows[0]?.role ?? 'LOGIN';
  } catch (err) {
    await side.close();
    throw err;
  }
  const session = { who, role };
  return { ...side, write: (batch) => withOrigin(writer, origin, session, () => side.write(batch)) };
}
