/**
 * Where a drain (`rowbridge run JOB`) may stop: once the stream has confirmed a position at
 * or past the end of every transaction committed before the drain started.
 *
 * `pg_current_wal_lsn()` is not that position: it is where the server has *written* WAL,
 * and an asynchronous commit (`synchronous_commit = off`) is visible to everyone before
 * its commit record is written. Right after such a commit the write position is still
 * the commit before it (seen every time on a test server), so a drain that stopped there
 * could end before the change it was started for, which then waited for the next drain.
 *
 * `pg_current_wal_insert_lsn()` is: a commit record is inserted before the transaction
 * is visible, so every commit made before the drain ends at or before it. The stream can
 * only read WAL the server has flushed, though, and WAL that is no commit (page pruning,
 * an open transaction's rows) may wait unflushed for a while on a quiet server; the
 * insert position may also sit just past a page header that no record has reached yet.
 * So the target falls back to the flush position read once the WAL writer has had time
 * to flush every asynchronous commit made before the start (documented as at most three
 * times `wal_writer_delay`; one more for a loaded machine): nothing committed before the
 * drain started lies beyond it, and the stream can reach it.
 */
import type pg from 'pg';
import { lsnValue } from './stream-changes.ts';

export interface DrainTarget {
  /** True once `confirmed` covers every transaction committed before the drain started. */
  reached(confirmed: string): boolean;
  /** Stops waiting for the fallback. */
  stop(): void;
}

/** Reads the target over `client`, an ordinary connection kept open while the drain runs. */
export async function startDrainTarget(client: pg.Client): Promise<DrainTarget> {
  const { rows } = await client.query<{ lsn: string; delay: string | null }>(
    `SELECT pg_current_wal_insert_lsn()::text AS lsn,
            (SELECT setting FROM pg_settings WHERE name = 'wal_writer_delay') AS delay`,
  );
  let target = lsnValue(rows[0]!.lsn);
  const delayMs = Number(rows[0]?.delay ?? 200);
  const timer = setTimeout(
    () => {
      client
        .query<{ lsn: string }>('SELECT pg_current_wal_flush_lsn()::text AS lsn')
        .then(({ rows: [row] }) => {
          if (row !== undefined && lsnValue(row.lsn) < target) target = lsnValue(row.lsn);
        })
        .catch(() => undefined);
    },
    4 * (Number.isFinite(delayMs) && delayMs > 0 ? delayMs : 200),
  );
  return {
    reached: (confirmed) => lsnValue(confirmed) >= target,
    stop: () => clearTimeout(timer),
  };
}
