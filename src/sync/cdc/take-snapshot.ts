/**
 * The first read of a change-capture job: the slot is made anew with an exported
 * snapshot, and the table is read under exactly that snapshot. The stream then starts at
 * the slot's consistent point: every change committed before it is in the snapshot,
 * every one after it is streamed (no gap, no double).
 */
import pg from 'pg';
import type { PostgresCdcSourceSpec } from '../sources/source-spec.ts';
import { pgWallClockTypes } from '../sources/sql-wall-clock-types.ts';
import { quoteIdent, quotedTable, slotState } from './cdc-admin.ts';

/** A page of the snapshot, in key order. */
export type SnapshotPage = Array<Record<string, unknown>>;

export interface SnapshotOptions {
  url: string;
  spec: PostgresCdcSourceSpec;
  /** Rows per page. */
  pageSize: number;
  /** Called with each page; the next is read after it resolves (the writer sets the pace). */
  onPage(rows: SnapshotPage): Promise<void>;
  signal?: AbortSignal;
}

/** Takes the snapshot; resolves to the slot's consistent point, where streaming starts. */
export async function takeSnapshot(options: SnapshotOptions): Promise<string> {
  const { url, spec } = options;
  const replication = new pg.Client({ connectionString: url, replication: 'database' } as pg.ClientConfig);
  const reader = new pg.Client({ connectionString: url, types: pgWallClockTypes });
  replication.on('error', () => undefined);
  reader.on('error', () => undefined);
  try {
    await replication.connect();
    await reader.connect();
    const existing = await slotState(reader, spec.slot);
    if (existing?.active === true)
      throw new Error(`slot ${spec.slot} is in use by server process ${existing.activePid ?? '?'}`);
    if (existing !== undefined) await reader.query('SELECT pg_drop_replication_slot($1)', [spec.slot]);
    // The replication protocol's own command: only it exports the slot's snapshot.
    const created = await replication.query<{ consistent_point: string; snapshot_name: string }>(
      `CREATE_REPLICATION_SLOT ${quoteIdent(spec.slot)} LOGICAL pgoutput EXPORT_SNAPSHOT`,
    );
    const { consistent_point: lsn, snapshot_name: snapshot } = created.rows[0]!;
    await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    await reader.query(`SET TRANSACTION SNAPSHOT '${snapshot.replaceAll("'", "''")}'`);
    const key = quoteIdent(spec.keyColumn);
    let after: unknown;
    for (;;) {
      options.signal?.throwIfAborted();
      const { rows } = await reader.query<Record<string, unknown>>(
        `SELECT * FROM ${quotedTable(spec.table)} ${after === undefined ? '' : `WHERE ${key} > $2`} ORDER BY ${key} LIMIT $1`,
        after === undefined ? [options.pageSize] : [options.pageSize, after],
      );
      if (rows.length === 0) break;
      await options.onPage(rows);
      after = rows[rows.length - 1]![spec.keyColumn];
      if (rows.length < options.pageSize) break;
    }
    await reader.query('COMMIT');
    return lsn;
  } finally {
    await reader.end().catch(() => undefined);
    await replication.end().catch(() => undefined);
  }
}
